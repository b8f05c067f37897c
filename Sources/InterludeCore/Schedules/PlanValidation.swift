import Foundation

extension SchedulePlan {
    public static let longestDurationMinutes = 366 * 24 * 60
    public static let mostOpeningsPerDay = 48

    /// Every problem of the plan, named by place (`pattern.days.monday.1.count`).
    public func problems() -> [FieldError] {
        var validator = FieldValidator()
        if !InstrumentDefinition.isValidKey(instrumentKey) { validator.add("instrumentKey", .invalidFormat) }
        if !(1...Self.longestDurationMinutes).contains(durationMinutes) {
            validator.add("durationMinutes", .outOfRange)
        }
        for (index, reminder) in reminderMinutes.enumerated() where reminder < 1 || reminder >= durationMinutes {
            validator.add("reminderMinutes.\(index)", .outOfRange)
        }
        if Set(reminderMinutes).count != reminderMinutes.count { validator.add("reminderMinutes", .duplicate) }
        if !(0...3650).contains(startAfterDays) { validator.add("startAfterDays", .outOfRange) }
        if let firstDate, let lastDate, lastDate < firstDate { validator.add("lastDate", .invalidValue) }
        switch pattern {
        case .fixedTimes(let times, let weekdays):
            Self.checkTimes(times, duration: durationMinutes, path: "pattern.times", into: &validator)
            if weekdays.isEmpty { validator.add("pattern.weekdays", .required) }
            if Set(weekdays).count != weekdays.count { validator.add("pattern.weekdays", .duplicate) }
        case .randomWindows(let days):
            if days.values.allSatisfy(\.isEmpty) { validator.add("pattern.days", .required) }
            for (weekday, windows) in days {
                Self.checkWindows(windows, duration: durationMinutes, path: "pattern.days.\(weekday.rawValue)", into: &validator)
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
            for (index, offset) in offsets.enumerated() where !(0...3650).contains(offset) {
                validator.add("pattern.offsets.\(index)", .outOfRange)
            }
            if Set(offsets).count != offsets.count { validator.add("pattern.offsets", .duplicate) }
        case .appointment(let before, let after):
            if !(0...(30 * 24 * 60)).contains(before) { validator.add("pattern.opensBeforeMinutes", .outOfRange) }
            if after <= -before || after > 7 * 24 * 60 { validator.add("pattern.closesAfterStartMinutes", .outOfRange) }
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
            for (index, window) in windows.enumerated() where window.start < bounds.earliest || window.end > bounds.latest {
                validator.add("\(path).\(index)", .outOfRange)
            }
            let total = windows.reduce(0) { $0 + $1.count }
            if !windows.isEmpty, !(bounds.minCount...bounds.maxCount).contains(total) {
                validator.add(path, .outOfRange, limit: bounds.maxCount)
            }
        }
        if days.values.allSatisfy(\.isEmpty) { validator.add("days", .required) }
    }

    /// A participant's own fixed times inside the bounds, as many a day as they allow, on at least one weekday.
    static func check(
        _ times: [LocalTime], weekdays: [Weekday], duration: Int, bounds: AdjustmentBounds, into validator: inout FieldValidator
    ) {
        checkTimes(times, duration: duration, path: "times", into: &validator)
        for (index, time) in times.enumerated() where time < bounds.earliest || time > bounds.latest {
            validator.add("times.\(index)", .outOfRange)
        }
        if !(bounds.minCount...bounds.maxCount).contains(times.count) {
            validator.add("times", .outOfRange, limit: bounds.maxCount)
        }
        if weekdays.isEmpty { validator.add("weekdays", .required) }
    }

    /// Fixed times: present, unique, and far enough apart that one prompt closes before the next opens, also
    /// across midnight.
    static func checkTimes(_ times: [LocalTime], duration: Int, path: String, into validator: inout FieldValidator) {
        if times.isEmpty { validator.add(path, .required) }
        if times.count > mostOpeningsPerDay { validator.add(path, .tooLong, limit: mostOpeningsPerDay) }
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

    /// Random windows: each with room for its openings, in order without overlapping, none spilling into the
    /// next day's first window.
    static func checkWindows(
        _ windows: [TimeWindow], duration: Int, path: String, into validator: inout FieldValidator
    ) {
        let sorted = windows.enumerated().sorted { $0.element.start < $1.element.start }
        var total = 0
        for (index, window) in sorted {
            total += window.count
            if window.count < 1 { validator.add("\(path).\(index).count", .outOfRange) }
            if window.end < window.start {
                validator.add("\(path).\(index).end", .invalidValue)
            } else if window.end.minutes - window.start.minutes < window.count * duration {
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
