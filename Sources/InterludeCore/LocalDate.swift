import Foundation

/// A calendar date without time or zone (`YYYY-MM-DD`), such as a date of birth.
public struct LocalDate: Hashable, Comparable, Sendable, CustomStringConvertible {
    public let year: Int
    public let month: Int
    public let day: Int

    public init?(year: Int, month: Int, day: Int) {
        guard (1...12).contains(month), (1...Self.days(inMonth: month, of: year)).contains(day) else { return nil }
        self.year = year
        self.month = month
        self.day = day
    }

    /// The date `days` after 1970-01-01 in the proleptic Gregorian calendar.
    public init(daysSinceEpoch days: Int) {
        // Civil-from-days: eras of 400 years (146 097 days), years counted from March so leap days come last.
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let marchMonth = (5 * dayOfYear + 2) / 153
        let month = marchMonth < 10 ? marchMonth + 3 : marchMonth - 9
        year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        self.month = month
        day = dayOfYear - (153 * marchMonth + 2) / 5 + 1
    }

    /// Days from 1970-01-01 to this date (negative before it).
    public var daysSinceEpoch: Int {
        let marchYear = month <= 2 ? year - 1 : year
        let era = (marchYear >= 0 ? marchYear : marchYear - 399) / 400
        let yearOfEra = marchYear - era * 400
        let dayOfYear = (153 * ((month + 9) % 12) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    static func days(inMonth month: Int, of year: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
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
        self.init(daysSinceEpoch: Self.localSeconds(instant, in: timeZone).days)
    }

    /// Whole local days since the epoch and the seconds into that day, as `instant` reads in `timeZone`.
    public static func localSeconds(_ instant: Date, in timeZone: TimeZone) -> (days: Int, seconds: Int) {
        let local = Int((instant.timeIntervalSince1970).rounded(.down)) + timeZone.secondsFromGMT(for: instant)
        let days = local >= 0 ? local / 86_400 : (local - 86_399) / 86_400
        return (days, local - days * 86_400)
    }

    public var description: String {
        var text = ""
        text.appendDigits(year, width: 4)
        text += "-"
        text.appendDigits(month, width: 2)
        text += "-"
        text.appendDigits(day, width: 2)
        return text
    }

    public static func < (lhs: LocalDate, rhs: LocalDate) -> Bool {
        (lhs.year, lhs.month, lhs.day) < (rhs.year, rhs.month, rhs.day)
    }
}

/// Written as `YYYY-MM-DD`.
extension LocalDate: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        guard let date = LocalDate(try container.decode(String.self)) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "Not a date as YYYY-MM-DD")
        }
        self = date
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
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
        let (days, seconds) = LocalDate.localSeconds(instant, in: timeZone)
        self.init(date: LocalDate(daysSinceEpoch: days), hour: seconds / 3600, minute: seconds % 3600 / 60)!
    }

    /// The instant this wall-clock time denotes in `timeZone`. A time skipped by a daylight-saving change moves
    /// forward by the gap; a time that happens twice takes its first occurrence.
    public func instant(in timeZone: TimeZone) -> Date {
        let asUTC = wallClockAsUTC
        // The offsets in force a day before and a day after cover both sides of any change.
        let candidates = Set(
            [-86_400.0, 0, 86_400].map { TimeInterval(timeZone.secondsFromGMT(for: asUTC.addingTimeInterval($0))) })
        let matches = candidates.map { asUTC.addingTimeInterval(-$0) }
            .filter { LocalDateTime($0, in: timeZone) == self }
            .sorted()
        if let first = matches.first { return first }
        // Skipped by a change: read the time with the offset before the gap, which lands after it.
        let before = TimeInterval(timeZone.secondsFromGMT(for: asUTC.addingTimeInterval(-86_400)))
        return asUTC.addingTimeInterval(-before)
    }

    /// This wall-clock time read as if it were UTC.
    var wallClockAsUTC: Date {
        Date(timeIntervalSince1970: TimeInterval(date.daysSinceEpoch * 86_400 + hour * 3600 + minute * 60))
    }

    public var description: String {
        var text = "\(date)T"
        text.appendClock(hour: hour, minute: minute)
        return text
    }
}

extension FieldValidator {
    /// A date given as `YYYY-MM-DD`, when given; `invalidFormat` otherwise.
    public mutating func date(_ text: String?, field: String) -> LocalDate? {
        guard let text else { return nil }
        guard let date = LocalDate(text) else {
            add(field, .invalidFormat)
            return nil
        }
        return date
    }
}
