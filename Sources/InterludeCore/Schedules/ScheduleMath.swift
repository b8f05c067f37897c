import Foundation

/// What the planner knows about one participant when it lays out a plan.
public struct ScheduleContext: Sendable {
    public var participantID: UUID
    public var planID: UUID
    public var timeZone: TimeZone
    public var enrolledAt: Date
    /// When the plan was attached; a one-time prompt opens no earlier.
    public var planCreatedAt: Date
    public var therapyStart: LocalDate?
    public var therapyEnd: LocalDate?
    public var appointments: [AppointmentSlot]
    public var adjustment: PlanAdjustment?

    public init(
        participantID: UUID, planID: UUID, timeZone: TimeZone, enrolledAt: Date, planCreatedAt: Date,
        therapyStart: LocalDate? = nil, therapyEnd: LocalDate? = nil, appointments: [AppointmentSlot] = [],
        adjustment: PlanAdjustment? = nil
    ) {
        self.participantID = participantID
        self.planID = planID
        self.timeZone = timeZone
        self.enrolledAt = enrolledAt
        self.planCreatedAt = planCreatedAt
        self.therapyStart = therapyStart
        self.therapyEnd = therapyEnd
        self.appointments = appointments
        self.adjustment = adjustment
    }
}

/// An appointment as plans see it.
public struct AppointmentSlot: Hashable, Sendable {
    public var id: UUID
    public var startsAt: Date
    public var endsAt: Date

    public init(id: UUID, startsAt: Date, endsAt: Date) {
        self.id = id
        self.startsAt = startsAt
        self.endsAt = endsAt
    }
}

/// One opening of a plan for one participant. `key` names it stably (its local date and slot, or its
/// appointment), so planning again finds it instead of making another.
public struct Occurrence: Hashable, Sendable {
    public var key: String
    public var opensAt: Date
    public var closesAt: Date
    public var reminders: [Date]
}

extension SchedulePlan {
    /// The openings whose local day lies between `from` and `through` (inclusive) in the participant's zone.
    /// The same inputs always give the same result: random times are seeded by participant, plan and day.
    public func occurrences(from: LocalDate, through: LocalDate, context: ScheduleContext) -> [Occurrence] {
        let zone = context.timeZone
        let enrolledOn = LocalDate(context.enrolledAt, in: zone)
        var first = max(from, enrolledOn.adding(days: startAfterDays))
        if let firstDate { first = max(first, firstDate) }
        var last = through
        if let lastDate { last = min(last, lastDate) }
        let duration = TimeInterval(durationMinutes * 60)

        switch pattern {
        case .appointment(let before, let after):
            return context.appointments.compactMap { slot in
                let opens = slot.startsAt.addingTimeInterval(-TimeInterval(before * 60))
                let closes = slot.startsAt.addingTimeInterval(TimeInterval(after * 60))
                let day = LocalDate(opens, in: zone)
                guard closes > opens, day >= first, day <= last else { return nil }
                return occurrence("appointment:\(slot.id.uuidString.lowercased())", opens, closes)
            }
        case .once:
            let opens = max(context.enrolledAt, context.planCreatedAt)
            let day = LocalDate(opens, in: zone)
            guard day >= from, day <= through, lastDate.map({ day <= $0 }) ?? true else { return [] }
            return [occurrence("once", opens, opens.addingTimeInterval(duration))]
        case .onDemand:
            return []
        default:
            break
        }
        guard first <= last else { return [] }
        var result: [Occurrence] = []
        var day = first
        while day <= last {
            result += occurrences(on: day, context: context, enrolledOn: enrolledOn)
            day = day.adding(days: 1)
        }
        return result
    }

    private func occurrence(_ key: String, _ opens: Date, _ closes: Date) -> Occurrence {
        let reminders = reminderMinutes.map { opens.addingTimeInterval(TimeInterval($0 * 60)) }.filter { $0 < closes }
        return Occurrence(key: key, opensAt: opens, closesAt: closes, reminders: reminders)
    }

    /// The openings of one local day, in order and without overlap: a start that falls before the previous
    /// prompt closed moves later by the difference.
    /// The pattern with the participant's own times in place: their times or windows, switching between random
    /// windows and fixed times only where the bounds offer both, and their time of a weekly or monthly plan.
    public func adjustedPattern(_ adjustment: PlanAdjustment?) -> SchedulePattern {
        let eitherMode = self.adjustment?.eitherMode == true
        switch (pattern, adjustment) {
        case (.fixedTimes, .times(let times, let weekdays)):
            return .fixedTimes(times: times, weekdays: weekdays)
        case (.randomWindows, .windows(let days)):
            return .randomWindows(days: days)
        case (.randomWindows, .times(let times, let weekdays)) where eitherMode:
            return .fixedTimes(times: times, weekdays: weekdays)
        case (.fixedTimes, .windows(let days)) where eitherMode:
            return .randomWindows(days: days)
        case (.weekly(let weekday, _), .time(let time)):
            return .weekly(weekday: weekday, time: time)
        case (.monthly(let day, _), .time(let time)):
            return .monthly(day: day, time: time)
        default:
            return pattern
        }
    }

    private func occurrences(on day: LocalDate, context: ScheduleContext, enrolledOn: LocalDate) -> [Occurrence] {
        let zone = context.timeZone
        let duration = TimeInterval(durationMinutes * 60)
        var starts: [(slot: String, opens: Date, window: WindowMinutes?)] = []
        switch adjustedPattern(context.adjustment) {
        case .fixedTimes(let times, let weekdays):
            guard weekdays.contains(day.weekday) else { return [] }
            starts = times.sorted().map { ($0.description, LocalDateTime(date: day, time: $0).instant(in: zone), nil) }
        case .randomWindows(let days):
            var generator = SeededGenerator(seed: "\(context.participantID)|\(context.planID)|\(day)")
            for (index, window) in (days[day.weekday] ?? []).sorted(by: { $0.start < $1.start }).enumerated() {
                let minutes = WindowMinutes(day: day, window: window, zone: zone)
                let room = max(0, minutes.count - 1 - (window.count - 1) * durationMinutes)
                let draws = (0..<window.count).map { _ in Int.random(in: 0...room, using: &generator) }.sorted()
                for (position, draw) in draws.enumerated() {
                    let minute = min(draw + position * durationMinutes, minutes.count - 1)
                    starts.append(("w\(index).\(position)", minutes[minute], minutes))
                }
            }
        case .weekly(let weekday, let time):
            guard day.weekday == weekday else { return [] }
            starts = [(time.description, LocalDateTime(date: day, time: time).instant(in: zone), nil)]
        case .monthly(let dayOfMonth, let time):
            let target = dayOfMonth == -1 ? day.daysInMonth : dayOfMonth
            guard day.day == target else { return [] }
            starts = [(time.description, LocalDateTime(date: day, time: time).instant(in: zone), nil)]
        case .relative(let anchor, let offsets, let every, let count, let time):
            let anchorDay: LocalDate?
            switch anchor {
            case .enrollment: anchorDay = enrolledOn
            case .therapyStart: anchorDay = context.therapyStart
            case .therapyEnd: anchorDay = context.therapyEnd
            }
            guard let anchorDay else { return [] }
            let offset = anchorDay.days(to: day)
            let scheduled: Bool
            if let every, let count {
                let start = offsets.first ?? 0
                scheduled = offset >= start && (offset - start) % every == 0 && (offset - start) / every < count
            } else {
                scheduled = offsets.contains(offset)
            }
            guard scheduled else { return [] }
            starts = [(time.description, LocalDateTime(date: day, time: time).instant(in: zone), nil)]
        case .appointment, .once, .onDemand:
            return []
        }
        var result: [Occurrence] = []
        var previousClose: Date?
        for start in starts.sorted(by: { $0.opens < $1.opens }) {
            var opens = start.opens
            if let previousClose, opens < previousClose {
                // Within a window that a change of the clocks cuts, move on to the next minute that is inside it.
                opens = start.window?.first(atOrAfter: previousClose) ?? previousClose
            }
            let closes = opens.addingTimeInterval(duration)
            result.append(occurrence("\(day)#\(start.slot)", opens, closes))
            previousClose = closes
        }
        return result
    }
}

/// The minutes of a day at which a random window may open, in real time: every minute from the window's start
/// to its end, except — on the night the clocks go back — those whose local time falls outside the window.
struct WindowMinutes: Sendable {
    /// Runs of consecutive minutes.
    private let runs: [(start: Date, count: Int)]
    let count: Int

    init(day: LocalDate, window: TimeWindow, zone: TimeZone) {
        let start = LocalDateTime(date: day, time: window.start).instant(in: zone)
        let end = LocalDateTime(date: day, time: window.end).lastInstant(in: zone)
        let span = max(0, Int(end.timeIntervalSince(start) / 60))
        if zone.secondsFromGMT(for: start) == zone.secondsFromGMT(for: end) {
            runs = [(start, span + 1)]
        } else {
            var found: [(start: Date, count: Int)] = []
            for minute in 0...span {
                let instant = start.addingTimeInterval(TimeInterval(minute * 60))
                let local = LocalDateTime(instant, in: zone)
                guard local.date == day, local.time >= window.start, local.time <= window.end else { continue }
                if let last = found.last, last.start.addingTimeInterval(TimeInterval(last.count * 60)) == instant {
                    found[found.count - 1].count += 1
                } else {
                    found.append((instant, 1))
                }
            }
            runs = found
        }
        count = runs.reduce(0) { $0 + $1.count }
    }

    subscript(index: Int) -> Date {
        var remaining = index
        for run in runs {
            if remaining < run.count { return run.start.addingTimeInterval(TimeInterval(remaining * 60)) }
            remaining -= run.count
        }
        let last = runs.last!
        return last.start.addingTimeInterval(TimeInterval((last.count - 1) * 60))
    }

    /// The first minute of the window at or after `instant`.
    func first(atOrAfter instant: Date) -> Date? {
        for run in runs {
            let runEnd = run.start.addingTimeInterval(TimeInterval((run.count - 1) * 60))
            if instant <= run.start { return run.start }
            if instant <= runEnd { return instant }
        }
        return nil
    }
}

/// A small, fast generator whose sequence depends only on its seed text (SplitMix64 seeded by FNV-1a), so a
/// day's random times are the same on every run and every machine.
public struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64

    public init(seed: String) {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in seed.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01B3
        }
        state = hash
    }

    public mutating func next() -> UInt64 {
        state = state &+ 0x9E37_79B9_7F4A_7C15
        var value = state
        value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
        value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
        return value ^ (value >> 31)
    }
}
