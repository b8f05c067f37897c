import Foundation

/// A calendar date without time or zone (`YYYY-MM-DD`), such as a date of birth.
public struct LocalDate: Hashable, Comparable, Sendable, CustomStringConvertible {
    public let year: Int
    public let month: Int
    public let day: Int

    public init?(year: Int, month: Int, day: Int) {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let components = DateComponents(year: year, month: month, day: day)
        guard (1...12).contains(month), (1...31).contains(day), let date = calendar.date(from: components),
            calendar.component(.day, from: date) == day, calendar.component(.month, from: date) == month
        else { return nil }
        self.year = year
        self.month = month
        self.day = day
    }

    /// Parses `YYYY-MM-DD`; nil for anything else or a day that does not exist.
    public init?(_ text: String) {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
            let year = Int(parts[0]), let month = Int(parts[1]), let day = Int(parts[2])
        else { return nil }
        self.init(year: year, month: month, day: day)
    }

    /// The calendar day that `instant` falls on in `timeZone`.
    public init(_ instant: Date, in timeZone: TimeZone) {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let parts = calendar.dateComponents([.year, .month, .day], from: instant)
        self.init(year: parts.year!, month: parts.month!, day: parts.day!)!
    }

    public var description: String {
        String(format: "%04d-%02d-%02d", year, month, day)
    }

    public static func < (lhs: LocalDate, rhs: LocalDate) -> Bool {
        (lhs.year, lhs.month, lhs.day) < (rhs.year, rhs.month, rhs.day)
    }
}

/// A wall-clock date and time without a zone, as a person enters it (`2026-03-02T09:30`).
public struct LocalDateTime: Hashable, Sendable, CustomStringConvertible {
    public let date: LocalDate
    public let hour: Int
    public let minute: Int

    public init?(date: LocalDate, hour: Int, minute: Int) {
        guard (0..<24).contains(hour), (0..<60).contains(minute) else { return nil }
        self.date = date
        self.hour = hour
        self.minute = minute
    }

    /// Parses `YYYY-MM-DDTHH:MM` (seconds, if given, are ignored), as an HTML `datetime-local` field sends it.
    public init?(_ text: String) {
        let parts = text.split(separator: "T")
        guard parts.count == 2, let date = LocalDate(String(parts[0])) else { return nil }
        let clock = parts[1].split(separator: ":")
        guard clock.count >= 2, clock[0].count == 2, clock[1].count == 2, let hour = Int(clock[0]),
            let minute = Int(clock[1])
        else { return nil }
        self.init(date: date, hour: hour, minute: minute)
    }

    /// The wall-clock time at which `instant` reads in `timeZone`.
    public init(_ instant: Date, in timeZone: TimeZone) {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let parts = calendar.dateComponents([.hour, .minute], from: instant)
        self.init(date: LocalDate(instant, in: timeZone), hour: parts.hour!, minute: parts.minute!)!
    }

    /// The instant this wall-clock time denotes in `timeZone`. A time skipped by a daylight-saving change moves
    /// forward by the gap; a time that happens twice takes its first occurrence.
    public func instant(in timeZone: TimeZone) -> Date {
        var utc = Calendar(identifier: .gregorian)
        utc.timeZone = TimeZone(identifier: "UTC")!
        let asUTC = utc.date(
            from: DateComponents(year: date.year, month: date.month, day: date.day, hour: hour, minute: minute))!
        // The offsets in force a day before and a day after cover both sides of any change.
        let candidates = Set([-86_400.0, 0, 86_400].map { TimeInterval(timeZone.secondsFromGMT(for: asUTC.addingTimeInterval($0))) })
        let matches = candidates.map { asUTC.addingTimeInterval(-$0) }
            .filter { LocalDateTime($0, in: timeZone) == self }
            .sorted()
        if let first = matches.first { return first }
        // Skipped by a change: read the time with the offset before the gap, which lands after it.
        let before = TimeInterval(timeZone.secondsFromGMT(for: asUTC.addingTimeInterval(-86_400)))
        return asUTC.addingTimeInterval(-before)
    }

    public var description: String {
        "\(date)T" + String(format: "%02d:%02d", hour, minute)
    }
}
