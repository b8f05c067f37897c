import Foundation

/// A period of whole days in a person's time zone, as one is asked for (`from` and `to` as `YYYY-MM-DD`, both
/// included): from the start of `from` to the end of `to`.
public struct DayPeriod: Sendable, Equatable {
    public let from: LocalDate
    public let to: LocalDate
    /// The instants it covers in the zone it was read in.
    public let instants: Range<Date>

    /// The days from `from` to `to`; nil when `to` comes before `from`.
    public init?(from: LocalDate, to: LocalDate, in zone: TimeZone) {
        guard from <= to else { return nil }
        self.from = from
        self.to = to
        let midnight = LocalTime(minutes: 0)!
        instants =
            LocalDateTime(date: from, time: midnight).instant(
                in: zone)..<LocalDateTime(date: to.adding(days: 1), time: midnight)
            .instant(in: zone)
    }

    /// Reads an asked-for period; a missing end is open (nil when both are missing). Refuses a date that is not
    /// one, an end before the start, and dates so far out that the period runs backwards (before year 1 or after
    /// 4000), naming the field.
    public static func instants(from: String?, to: String?, in zone: TimeZone) throws(ValidationFailure) -> Range<Date>?
    {
        var validator = FieldValidator()
        let start = validator.date(from, field: "from")
        let end = validator.date(to, field: "to")
        if let start, let end, end < start { validator.add("to", .outOfRange) }
        try validator.check()
        guard start != nil || end != nil else { return nil }
        let midnight = LocalTime(minutes: 0)!
        let lower = start.map { LocalDateTime(date: $0, time: midnight).instant(in: zone) } ?? .distantPast
        let upper =
            end.map { LocalDateTime(date: $0.adding(days: 1), time: midnight).instant(in: zone) } ?? .distantFuture
        guard lower < upper else { throw ValidationFailure(field: end != nil ? "to" : "from", code: .outOfRange) }
        return lower..<upper
    }

    /// A closed period, both ends given or filled in: by default the `days` days up to and including today.
    public static func read(
        from: String?, to: String?, in zone: TimeZone, now: Date, defaultDays days: Int
    ) throws(ValidationFailure) -> DayPeriod {
        var validator = FieldValidator()
        var end = validator.date(to, field: "to") ?? LocalDate(now, in: zone)
        if !years.contains(end.year) {
            validator.add("to", .outOfRange)
            end = LocalDate(now, in: zone)
        }
        var start = validator.date(from, field: "from") ?? end.adding(days: 1 - days)
        if !years.contains(start.year) {
            validator.add("from", .outOfRange)
            start = end
        }
        if end.daysSinceEpoch - start.daysSinceEpoch >= maxDays { validator.add("to", .outOfRange, limit: maxDays) }
        try validator.check()
        guard let period = DayPeriod(from: start, to: end, in: zone) else {
            throw ValidationFailure(field: "to", code: .outOfRange)
        }
        return period
    }

    /// The longest period a report covers: a bit more than two years.
    public static let maxDays = 800
    /// The years a closed period may reach into.
    public static let years = 1900...2999
}
