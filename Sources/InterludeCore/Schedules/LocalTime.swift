import Foundation

/// A wall-clock time of day to the minute (`08:00`), encoded as `"HH:MM"`.
public struct LocalTime: Codable, Hashable, Comparable, Sendable, CustomStringConvertible {
    public let hour: Int
    public let minute: Int

    public init?(hour: Int, minute: Int) {
        guard (0..<24).contains(hour), (0..<60).contains(minute) else { return nil }
        self.hour = hour
        self.minute = minute
    }

    public init?(_ text: String) {
        let parts = text.split(separator: ":")
        guard parts.count == 2, parts[0].count == 2, parts[1].count == 2, let hour = Int(parts[0]),
            let minute = Int(parts[1])
        else { return nil }
        self.init(hour: hour, minute: minute)
    }

    /// Minutes since midnight.
    public var minutes: Int { hour * 60 + minute }

    public init?(minutes: Int) {
        guard (0..<1440).contains(minutes) else { return nil }
        self.init(hour: minutes / 60, minute: minutes % 60)
    }

    public var description: String {
        var text = ""
        text.appendClock(hour: hour, minute: minute)
        return text
    }

    public static func < (lhs: LocalTime, rhs: LocalTime) -> Bool { lhs.minutes < rhs.minutes }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let time = LocalTime(text) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "Expected a time as HH:MM")
        }
        self = time
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}

/// Days of the week, Monday first as ISO 8601 counts them; encoded by name (`"monday"`).
public enum Weekday: String, Codable, CaseIterable, Comparable, Sendable {
    case monday, tuesday, wednesday, thursday, friday, saturday, sunday

    /// 1 for Monday … 7 for Sunday.
    public var isoNumber: Int { Weekday.allCases.firstIndex(of: self)! + 1 }

    public static func < (lhs: Weekday, rhs: Weekday) -> Bool { lhs.isoNumber < rhs.isoNumber }
}

extension LocalDate {
    /// The day after (or `days` after) this one.
    public func adding(days: Int) -> LocalDate {
        LocalDate(daysSinceEpoch: daysSinceEpoch + days)
    }

    public var weekday: Weekday {
        // 1970-01-01 was a Thursday, the fourth day of a Monday-first week.
        Weekday.allCases[((daysSinceEpoch + 3) % 7 + 7) % 7]
    }

    /// Whole days from `self` to `other` (negative when `other` is earlier).
    public func days(to other: LocalDate) -> Int {
        other.daysSinceEpoch - daysSinceEpoch
    }

    /// The number of days in this date's month.
    public var daysInMonth: Int {
        LocalDate.days(inMonth: month, of: year)
    }
}

extension LocalDateTime {
    public init(date: LocalDate, time: LocalTime) {
        self.init(date: date, hour: time.hour, minute: time.minute)!
    }

    public var time: LocalTime { LocalTime(hour: hour, minute: minute)! }

    /// Every instant this wall-clock time denotes in `timeZone`: none when a change skips it, two when a change
    /// repeats it, else one.
    public func occurrences(in timeZone: TimeZone) -> [Date] {
        let asUTC = wallClockAsUTC
        let offsets = Set(
            [-86_400.0, 0, 86_400].map { TimeInterval(timeZone.secondsFromGMT(for: asUTC.addingTimeInterval($0))) })
        return offsets.map { asUTC.addingTimeInterval(-$0) }.filter { LocalDateTime($0, in: timeZone) == self }.sorted()
    }

    /// The latest instant whose local time is at most this one: its last occurrence, or the minute before the
    /// gap when a change skips it.
    public func lastInstant(in timeZone: TimeZone) -> Date {
        if let last = occurrences(in: timeZone).last { return last }
        let forward = instant(in: timeZone)
        let transition =
            timeZone.nextDaylightSavingTimeTransition(after: forward.addingTimeInterval(-2 * 86_400)) ?? forward
        return transition.addingTimeInterval(-60)
    }
}
