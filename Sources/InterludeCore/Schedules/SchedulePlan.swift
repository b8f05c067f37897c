import Foundation

/// When an instrument is offered to a participant, in the participant's local wall-clock time: the pattern of
/// openings, how long each stays open, reminders, the notification text, when the plan starts and ends, and
/// how far a participant may adjust it.
public struct SchedulePlan: Codable, Hashable, Sendable {
    public var instrumentKey: String
    public var pattern: SchedulePattern
    /// How long each prompt stays open, in minutes.
    public var durationMinutes: Int
    /// Reminders, in minutes after a prompt opens; each inside the open period.
    public var reminderMinutes: [Int]
    public var notification: LocalizedText?
    /// Nothing before this many days after enrolment (0: from the day of enrolment).
    public var startAfterDays: Int
    /// The study's first and last day, in the participant's local calendar.
    public var firstDate: LocalDate?
    public var lastDate: LocalDate?
    /// Whether and how far a participant may change the times; nil when they may not.
    public var adjustment: AdjustmentBounds?

    public init(
        instrumentKey: String, pattern: SchedulePattern, durationMinutes: Int, reminderMinutes: [Int] = [],
        notification: LocalizedText? = nil, startAfterDays: Int = 0, firstDate: LocalDate? = nil,
        lastDate: LocalDate? = nil, adjustment: AdjustmentBounds? = nil
    ) {
        self.instrumentKey = instrumentKey
        self.pattern = pattern
        self.durationMinutes = durationMinutes
        self.reminderMinutes = reminderMinutes
        self.notification = notification
        self.startAfterDays = startAfterDays
        self.firstDate = firstDate
        self.lastDate = lastDate
        self.adjustment = adjustment
    }

    enum CodingKeys: String, CodingKey {
        case instrumentKey, pattern, durationMinutes, reminderMinutes, notification, startAfterDays, firstDate, lastDate
        case adjustment
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        instrumentKey = try container.decode(String.self, forKey: .instrumentKey)
        pattern = try container.decode(SchedulePattern.self, forKey: .pattern)
        durationMinutes = try container.decode(Int.self, forKey: .durationMinutes)
        reminderMinutes = try container.decodeIfPresent([Int].self, forKey: .reminderMinutes) ?? []
        notification = try container.decodeIfPresent(LocalizedText.self, forKey: .notification)
        startAfterDays = try container.decodeIfPresent(Int.self, forKey: .startAfterDays) ?? 0
        firstDate = try container.decodeIfPresent(String.self, forKey: .firstDate).map { text in
            guard let date = LocalDate(text) else {
                throw DecodingError.dataCorruptedError(
                    forKey: .firstDate, in: container, debugDescription: "YYYY-MM-DD")
            }
            return date
        }
        lastDate = try container.decodeIfPresent(String.self, forKey: .lastDate).map { text in
            guard let date = LocalDate(text) else {
                throw DecodingError.dataCorruptedError(forKey: .lastDate, in: container, debugDescription: "YYYY-MM-DD")
            }
            return date
        }
        adjustment = try container.decodeIfPresent(AdjustmentBounds.self, forKey: .adjustment)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(instrumentKey, forKey: .instrumentKey)
        try container.encode(pattern, forKey: .pattern)
        try container.encode(durationMinutes, forKey: .durationMinutes)
        try container.encode(reminderMinutes, forKey: .reminderMinutes)
        try container.encodeIfPresent(notification, forKey: .notification)
        try container.encode(startAfterDays, forKey: .startAfterDays)
        try container.encodeIfPresent(firstDate?.description, forKey: .firstDate)
        try container.encodeIfPresent(lastDate?.description, forKey: .lastDate)
        try container.encodeIfPresent(adjustment, forKey: .adjustment)
    }
}

extension SchedulePlan {
    /// Seed 000's Intersession-Daily: every day one opening at random in each of 08:00–11:59, 12:00–15:59 and
    /// 16:00–19:59, open 30 minutes.
    public static func intersessionDaily(reminderMinutes: [Int] = [], notification: LocalizedText? = nil)
        -> SchedulePlan
    {
        let windows = [("08:00", "11:59"), ("12:00", "15:59"), ("16:00", "19:59")].map {
            TimeWindow(start: LocalTime($0.0)!, end: LocalTime($0.1)!, count: 1)
        }
        return SchedulePlan(
            instrumentKey: "intersession-daily",
            pattern: .randomWindows(days: Dictionary(uniqueKeysWithValues: Weekday.allCases.map { ($0, windows) })),
            durationMinutes: 30, reminderMinutes: reminderMinutes, notification: notification)
    }
}

/// A time window of a day with how many prompts open at random inside it (`08:00`–`11:59`, 1).
public struct TimeWindow: Codable, Hashable, Sendable {
    public var start: LocalTime
    /// The last minute a prompt may open at.
    public var end: LocalTime
    public var count: Int

    public init(start: LocalTime, end: LocalTime, count: Int) {
        self.start = start
        self.end = end
        self.count = count
    }
}

/// What a plan's openings follow.
public enum SchedulePattern: Hashable, Sendable {
    /// The same local times on the chosen weekdays.
    case fixedTimes(times: [LocalTime], weekdays: [Weekday])
    /// For each weekday, windows with a number of random openings inside each; a missing weekday has none.
    case randomWindows(days: [Weekday: [TimeWindow]])
    case weekly(weekday: Weekday, time: LocalTime)
    /// On a day of the month (1–28, or -1 for the last day).
    case monthly(day: Int, time: LocalTime)
    /// Days after an anchor: either the given offsets, or every `every` days `count` times from `offsetDays`.
    case relative(anchor: Anchor, offsets: [Int], every: Int?, count: Int?, time: LocalTime)
    /// Around each appointment: opens before it starts and closes relative to its start.
    case appointment(opensBeforeMinutes: Int, closesAfterStartMinutes: Int)
    /// Once, as soon as the participant is enrolled; answered before the repeated ones.
    case once
    /// Whenever the participant asks for it.
    case onDemand

    public enum Anchor: String, Codable, Hashable, Sendable, CaseIterable {
        case enrollment
        case therapyStart
        /// The therapy's last day: a post measurement on it (0), follow-ups after it (84 for twelve weeks).
        case therapyEnd
    }

    public var kind: String {
        switch self {
        case .fixedTimes: return "fixedTimes"
        case .randomWindows: return "randomWindows"
        case .weekly: return "weekly"
        case .monthly: return "monthly"
        case .relative: return "relative"
        case .appointment: return "appointment"
        case .once: return "once"
        case .onDemand: return "onDemand"
        }
    }
}

extension SchedulePattern: Codable {
    enum CodingKeys: String, CodingKey {
        case kind, times, weekdays, days, weekday, time, day, anchor, offsets, every, count, opensBeforeMinutes
        case closesAfterStartMinutes
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let kind = try container.decode(String.self, forKey: .kind)
        switch kind {
        case "fixedTimes":
            self = .fixedTimes(
                times: try container.decode([LocalTime].self, forKey: .times),
                weekdays: try container.decodeIfPresent([Weekday].self, forKey: .weekdays) ?? Weekday.allCases)
        case "randomWindows":
            let raw = try container.decode([String: [TimeWindow]].self, forKey: .days)
            var days: [Weekday: [TimeWindow]] = [:]
            for (name, windows) in raw {
                guard let weekday = Weekday(rawValue: name) else {
                    throw DecodingError.dataCorruptedError(
                        forKey: .days, in: container, debugDescription: "Unknown weekday \(name)")
                }
                days[weekday] = windows
            }
            self = .randomWindows(days: days)
        case "weekly":
            self = .weekly(
                weekday: try container.decode(Weekday.self, forKey: .weekday),
                time: try container.decode(LocalTime.self, forKey: .time))
        case "monthly":
            self = .monthly(
                day: try container.decode(Int.self, forKey: .day),
                time: try container.decode(LocalTime.self, forKey: .time))
        case "relative":
            self = .relative(
                anchor: try container.decodeIfPresent(Anchor.self, forKey: .anchor) ?? .enrollment,
                offsets: try container.decodeIfPresent([Int].self, forKey: .offsets) ?? [],
                every: try container.decodeIfPresent(Int.self, forKey: .every),
                count: try container.decodeIfPresent(Int.self, forKey: .count),
                time: try container.decode(LocalTime.self, forKey: .time))
        case "appointment":
            self = .appointment(
                opensBeforeMinutes: try container.decode(Int.self, forKey: .opensBeforeMinutes),
                closesAfterStartMinutes: try container.decodeIfPresent(Int.self, forKey: .closesAfterStartMinutes) ?? 0)
        case "once": self = .once
        case "onDemand": self = .onDemand
        default:
            throw DecodingError.dataCorruptedError(
                forKey: .kind, in: container, debugDescription: "Unknown kind \(kind)")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(kind, forKey: .kind)
        switch self {
        case .fixedTimes(let times, let weekdays):
            try container.encode(times, forKey: .times)
            try container.encode(weekdays.sorted(), forKey: .weekdays)
        case .randomWindows(let days):
            try container.encode(
                Dictionary(uniqueKeysWithValues: days.map { ($0.key.rawValue, $0.value) }), forKey: .days)
        case .weekly(let weekday, let time):
            try container.encode(weekday, forKey: .weekday)
            try container.encode(time, forKey: .time)
        case .monthly(let day, let time):
            try container.encode(day, forKey: .day)
            try container.encode(time, forKey: .time)
        case .relative(let anchor, let offsets, let every, let count, let time):
            try container.encode(anchor, forKey: .anchor)
            try container.encode(offsets, forKey: .offsets)
            try container.encodeIfPresent(every, forKey: .every)
            try container.encodeIfPresent(count, forKey: .count)
            try container.encode(time, forKey: .time)
        case .appointment(let before, let after):
            try container.encode(before, forKey: .opensBeforeMinutes)
            try container.encode(after, forKey: .closesAfterStartMinutes)
        case .once, .onDemand:
            break
        }
    }
}

/// How far a participant may move a plan's times: every opening between `earliest` and `latest`, and between
/// `minCount` and `maxCount` openings a day (a weekly or monthly plan has one, its time the participant's).
/// With `eitherMode`, a plan of random windows or fixed times lets the participant choose either.
public struct AdjustmentBounds: Codable, Hashable, Sendable {
    public var earliest: LocalTime
    public var latest: LocalTime
    public var minCount: Int
    public var maxCount: Int
    public var eitherMode: Bool

    public init(earliest: LocalTime, latest: LocalTime, minCount: Int, maxCount: Int, eitherMode: Bool = false) {
        self.earliest = earliest
        self.latest = latest
        self.minCount = minCount
        self.maxCount = maxCount
        self.eitherMode = eitherMode
    }

    enum CodingKeys: String, CodingKey { case earliest, latest, minCount, maxCount, eitherMode }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        earliest = try container.decode(LocalTime.self, forKey: .earliest)
        latest = try container.decode(LocalTime.self, forKey: .latest)
        minCount = try container.decodeIfPresent(Int.self, forKey: .minCount) ?? 1
        maxCount = try container.decodeIfPresent(Int.self, forKey: .maxCount) ?? 1
        eitherMode = try container.decodeIfPresent(Bool.self, forKey: .eitherMode) ?? false
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(earliest, forKey: .earliest)
        try container.encode(latest, forKey: .latest)
        try container.encode(minCount, forKey: .minCount)
        try container.encode(maxCount, forKey: .maxCount)
        if eitherMode { try container.encode(eitherMode, forKey: .eitherMode) }
    }
}

/// A participant's own version of an adjustable plan: per-weekday windows (random plans) or times (fixed plans),
/// either where the plan offers both, or the time of a weekly or monthly plan.
public enum PlanAdjustment: Hashable, Sendable, Codable {
    case windows([Weekday: [TimeWindow]])
    case times(times: [LocalTime], weekdays: [Weekday])
    case time(LocalTime)

    enum CodingKeys: String, CodingKey { case days, times, weekdays, time }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        if let raw = try container.decodeIfPresent([String: [TimeWindow]].self, forKey: .days) {
            var days: [Weekday: [TimeWindow]] = [:]
            for (name, windows) in raw {
                guard let weekday = Weekday(rawValue: name) else {
                    throw DecodingError.dataCorruptedError(
                        forKey: .days, in: container, debugDescription: "Unknown weekday \(name)")
                }
                days[weekday] = windows
            }
            self = .windows(days)
        } else if let time = try container.decodeIfPresent(LocalTime.self, forKey: .time) {
            self = .time(time)
        } else {
            self = .times(
                times: try container.decode([LocalTime].self, forKey: .times),
                weekdays: try container.decodeIfPresent([Weekday].self, forKey: .weekdays) ?? Weekday.allCases)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .windows(let days):
            try container.encode(
                Dictionary(uniqueKeysWithValues: days.map { ($0.key.rawValue, $0.value) }), forKey: .days)
        case .times(let times, let weekdays):
            try container.encode(times, forKey: .times)
            try container.encode(weekdays.sorted(), forKey: .weekdays)
        case .time(let time):
            try container.encode(time, forKey: .time)
        }
    }
}
