import Foundation

extension SchedulePlan {
    public static let longestDurationMinutes = 366 * 24 * 60
    public static let mostOpeningsPerDay = 48
    /// Reminders a prompt may have, and the least time between two of them (and between opening and the first).
    public static let mostReminders = 10
    public static let reminderSpacingMinutes = 5
    public static let mostOffsets = 1000
    public static let longestOffsetDays = 3650

    /// Every problem of the plan, named by place (`pattern.days.monday.1.count`).
    public func problems() -> [FieldError] {
        var validator = FieldValidator()
        if !InstrumentDefinition.isValidKey(instrumentKey) { validator.add("instrumentKey", .invalidFormat) }
        if !(1...Self.longestDurationMinutes).contains(durationMinutes) {
            validator.add("durationMinutes", .outOfRange)
        }
        Self.checkReminders(reminderMinutes, duration: durationMinutes, into: &validator)
        if !(0...Self.longestOffsetDays).contains(startAfterDays) { validator.add("startAfterDays", .outOfRange) }
        if let firstDate, let lastDate, lastDate < firstDate { validator.add("lastDate", .invalidValue) }
        switch pattern {
        case .fixedTimes(let times, let weekdays):
            Self.checkTimes(times, duration: durationMinutes, path: "pattern.times", into: &validator)
            if weekdays.isEmpty { validator.add("pattern.weekdays", .required) }
            if Set(weekdays).count != weekdays.count { validator.add("pattern.weekdays", .duplicate) }
        case .randomWindows(let days):
            if days.values.allSatisfy(\.isEmpty) { validator.add("pattern.days", .required) }
            for (weekday, windows) in days {
                Self.checkWindows(
                    windows, duration: durationMinutes, path: "pattern.days.\(weekday.rawValue)", into: &validator)
            }
        case .weekly:
            break
        case .monthly(let day, _):
            if day != -1 && !(1...28).contains(day) { validator.add("pattern.day", .outOfRange) }
        case .relative(_, let offsets, let every, let count, _):
            if let every, let count {
                if !(1...365).contains(every) { validator.add("pattern.every", .outOfRange) }
                if !(1...1000).contains(count) { validator.add("pattern.count", .outOfRange) }
                if offsets.count > 1 { validator.add("pattern.offsets", .notAllowed) }
            } else if every != nil || count != nil {
                validator.add(every == nil ? "pattern.every" : "pattern.count", .required)
            } else if offsets.isEmpty {
                validator.add("pattern.offsets", .required)
            }
            if offsets.count > Self.mostOffsets {
                validator.add("pattern.offsets", .tooLong, limit: Self.mostOffsets)
            } else {
                for (index, offset) in offsets.enumerated() where !(0...Self.longestOffsetDays).contains(offset) {
                    validator.add("pattern.offsets.\(index)", .outOfRange)
                }
                if Set(offsets).count != offsets.count { validator.add("pattern.offsets", .duplicate) }
            }
        case .appointment(let before, let after):
            let validBefore = Self.opensBeforeRange.contains(before)
            if !validBefore { validator.add("pattern.opensBeforeMinutes", .outOfRange) }
            // Closing before the opening is refused too, which needs a valid opening to compare with.
            if !Self.closesAfterStartRange.contains(after) || (validBefore && after <= -before) {
                validator.add("pattern.closesAfterStartMinutes", .outOfRange)
            }
        case .once, .onDemand:
            break
        }
        if let adjustment {
            switch pattern {
            case .fixedTimes, .randomWindows:
                if adjustment.latest <= adjustment.earliest { validator.add("adjustment.latest", .invalidValue) }
                if adjustment.minCount < 1 || adjustment.maxCount < adjustment.minCount
                    || adjustment.maxCount > Self.mostOpeningsPerDay
                {
                    validator.add("adjustment.maxCount", .outOfRange)
                }
            case .weekly, .monthly:
                if adjustment.latest <= adjustment.earliest { validator.add("adjustment.latest", .invalidValue) }
                if adjustment.eitherMode { validator.add("adjustment.eitherMode", .notAllowed) }
            default:
                validator.add("adjustment", .notAllowed)
            }
        }
        return validator.errors
    }

    /// How long before an appointment a prompt about it may open, and when relative to its start it may close.
    public static let opensBeforeRange = 0...(30 * 24 * 60)
    public static let closesAfterStartRange = -(30 * 24 * 60)...(7 * 24 * 60)

    /// Reminders: few, each inside the prompt's time, none sooner than `reminderSpacingMinutes` after the opening or
    /// the reminder before.
    static func checkReminders(_ reminders: [Int], duration: Int, into validator: inout FieldValidator) {
        guard reminders.count <= mostReminders else {
            validator.add("reminderMinutes", .tooLong, limit: mostReminders)
            return
        }
        for (index, reminder) in reminders.enumerated() where reminder < reminderSpacingMinutes || reminder >= duration
        {
            validator.add("reminderMinutes.\(index)", .outOfRange)
        }
        if Set(reminders).count != reminders.count {
            validator.add("reminderMinutes", .duplicate)
        } else {
            let sorted = reminders.sorted()
            if zip(sorted, sorted.dropFirst()).contains(where: { $1 - $0 < reminderSpacingMinutes }) {
                validator.add("reminderMinutes", .overlap, limit: reminderSpacingMinutes)
            }
        }
    }

    public func validate() throws(ValidationFailure) {
        let found = problems()
        if !found.isEmpty { throw ValidationFailure(found) }
    }

    /// Checks a participant's own times against the plan's bounds; refused outside them.
    public func check(_ adjustment: PlanAdjustment) throws(ValidationFailure) {
        var validator = FieldValidator()
        guard let bounds = self.adjustment else { throw ValidationFailure(field: "planId", code: .notAllowed) }
        switch (pattern, adjustment) {
        case (.randomWindows, .windows(let days)):
            Self.check(days, duration: durationMinutes, bounds: bounds, into: &validator)
        case (.fixedTimes, .times(let times, let weekdays)):
            Self.check(times, weekdays: weekdays, duration: durationMinutes, bounds: bounds, into: &validator)
        case (.fixedTimes, .windows(let days)) where bounds.eitherMode:
            Self.check(days, duration: durationMinutes, bounds: bounds, into: &validator)
        case (.randomWindows, .times(let times, let weekdays)) where bounds.eitherMode:
            Self.check(times, weekdays: weekdays, duration: durationMinutes, bounds: bounds, into: &validator)
        case (.weekly, .time(let time)), (.monthly, .time(let time)):
            if time < bounds.earliest || time > bounds.latest { validator.add("time", .outOfRange) }
        default:
            validator.add("adjustment", .wrongType)
        }
        try validator.check()
    }

    /// A participant's own random windows inside the bounds, with the number of openings a day they allow.
    static func check(
        _ days: [Weekday: [TimeWindow]], duration: Int, bounds: AdjustmentBounds, into validator: inout FieldValidator
    ) {
        for (weekday, windows) in days {
            let path = "days.\(weekday.rawValue)"
            checkWindows(windows, duration: duration, path: path, into: &validator)
            for (index, window) in windows.enumerated()
            where window.start < bounds.earliest || window.end > bounds.latest {
                validator.add("\(path).\(index)", .outOfRange)
            }
            // Counts outside 1…48 are refused on their own; they are left out of the day's sum, which they could overflow.
            let total = windows.reduce(0) { $0 + (openingsRange.contains($1.count) ? $1.count : 0) }
            if !windows.isEmpty, bounds.minCount <= bounds.maxCount,
                !(bounds.minCount...bounds.maxCount).contains(total)
            {
                validator.add(path, .outOfRange, limit: bounds.maxCount)
            }
        }
        if days.values.allSatisfy(\.isEmpty) { validator.add("days", .required) }
    }

    /// A participant's own fixed times inside the bounds, as many a day as they allow, on at least one weekday.
    static func check(
        _ times: [LocalTime], weekdays: [Weekday], duration: Int, bounds: AdjustmentBounds,
        into validator: inout FieldValidator
    ) {
        checkTimes(times, duration: duration, path: "times", into: &validator)
        for (index, time) in times.enumerated() where time < bounds.earliest || time > bounds.latest {
            validator.add("times.\(index)", .outOfRange)
        }
        if bounds.minCount > bounds.maxCount || !(bounds.minCount...bounds.maxCount).contains(times.count) {
            validator.add("times", .outOfRange, limit: bounds.maxCount)
        }
        if weekdays.isEmpty { validator.add("weekdays", .required) }
    }

    /// Fixed times: present, unique, and far enough apart that one prompt closes before the next opens, also
    /// across midnight.
    static func checkTimes(_ times: [LocalTime], duration: Int, path: String, into validator: inout FieldValidator) {
        if times.isEmpty { validator.add(path, .required) }
        if times.count > mostOpeningsPerDay {
            validator.add(path, .tooLong, limit: mostOpeningsPerDay)
            return
        }
        let sorted = times.sorted()
        if Set(times).count != times.count { validator.add(path, .duplicate) }
        for (previous, next) in zip(sorted, sorted.dropFirst()) where next.minutes - previous.minutes < duration {
            validator.add(path, .overlap)
            return
        }
        if let first = sorted.first, let last = sorted.last, first.minutes + 1440 - last.minutes < duration {
            validator.add(path, .overlap)
        }
    }

    /// How many openings one window may hold.
    static let openingsRange = 1...mostOpeningsPerDay

    /// Random windows: each with room for its openings, in order without overlapping, none spilling into the
    /// next day's first window.
    static func checkWindows(
        _ windows: [TimeWindow], duration: Int, path: String, into validator: inout FieldValidator
    ) {
        if windows.count > mostOpeningsPerDay {
            validator.add(path, .tooLong, limit: mostOpeningsPerDay)
            return
        }
        let sorted = windows.enumerated().sorted { $0.element.start < $1.element.start }
        var total = 0
        for (index, window) in sorted {
            guard openingsRange.contains(window.count) else {
                validator.add("\(path).\(index).count", .outOfRange, limit: mostOpeningsPerDay)
                continue
            }
            total += window.count
            // A duration outside its range is refused on its own; the product is computed without overflowing.
            let (needed, overflow) = window.count.multipliedReportingOverflow(by: duration)
            if window.end < window.start {
                validator.add("\(path).\(index).end", .invalidValue)
            } else if overflow || window.end.minutes - window.start.minutes < needed {
                validator.add("\(path).\(index).count", .outOfRange)
            }
        }
        for (previous, next) in zip(sorted, sorted.dropFirst()) where next.element.start <= previous.element.end {
            validator.add("\(path).\(next.offset)", .overlap)
        }
        if let first = sorted.first?.element, let last = sorted.last?.element,
            first.start.minutes + 1440 - last.end.minutes < duration
        {
            validator.add(path, .overlap)
        }
        if total > mostOpeningsPerDay { validator.add(path, .tooLong, limit: mostOpeningsPerDay) }
    }
}

extension SchedulePlan {
    /// The minutes of the reminders due in `window` for a prompt that opened at `opens` and closes at `closes`,
    /// found from `sortedMinutes` by where the window's bounds fall, without walking the list: a plan stored before
    /// reminders were capped may hold hundreds of thousands. Never more than `mostReminders`.
    public static func dueReminders(
        _ sortedMinutes: [Int], opens: Date, closes: Date, in window: ClosedRange<Date>
    ) -> ArraySlice<Int> {
        let end = min(window.upperBound, closes.addingTimeInterval(-1))
        guard end >= window.lowerBound, end >= opens else { return [] }
        let first = Int((max(window.lowerBound.timeIntervalSince(opens), 0) / 60).rounded(.up))
        let last = Int((end.timeIntervalSince(opens) / 60).rounded(.down))
        let from = sortedMinutes.boundary { $0 >= first }
        let to = sortedMinutes.boundary { $0 > last }
        return from < to ? sortedMinutes[from..<min(to, from + mostReminders)] : []
    }
}

extension Array where Element == Int {
    /// The first index whose element has `property`, in a sorted array where every element after such an element
    /// has it too; `count` when none does.
    fileprivate func boundary(_ property: (Int) -> Bool) -> Int {
        var low = 0
        var high = count
        while low < high {
            let middle = (low + high) / 2
            if property(self[middle]) { high = middle } else { low = middle + 1 }
        }
        return low
    }
}
