import Foundation

/// The time zones a participant lived in, each from the moment it was set; before the first, the first applies.
public struct ZoneHistory: Sendable, Equatable {
    public struct Period: Sendable, Equatable {
        public let zone: TimeZone
        public let since: Date
        /// When the next zone took over; nil for the zone in force now.
        public let until: Date?
    }

    public let periods: [Period]

    /// `changes` in any order; an unknown zone name is read as UTC, the way the planner reads it.
    public init(_ changes: [(zone: String, since: Date)]) {
        let sorted = changes.sorted { $0.since < $1.since }
        var periods: [Period] = []
        for (index, change) in sorted.enumerated() {
            let until = index + 1 < sorted.count ? sorted[index + 1].since : nil
            let zone = TimeZone(identifier: change.zone) ?? TimeZone(identifier: "UTC")!
            if let last = periods.last, last.zone == zone {
                periods[periods.count - 1] = Period(zone: zone, since: last.since, until: until)
            } else {
                periods.append(Period(zone: zone, since: change.since, until: until))
            }
        }
        self.periods =
            periods.isEmpty ? [Period(zone: TimeZone(identifier: "UTC")!, since: .distantPast, until: nil)] : periods
    }

    public func zone(at date: Date) -> TimeZone {
        periods.last { $0.since <= date }?.zone ?? periods[0].zone
    }

    /// The calendar date of `date` where the participant was then.
    public func localDate(of date: Date) -> LocalDate {
        let zone = zone(at: date)
        let local = date.timeIntervalSince1970 + Double(zone.secondsFromGMT(for: date))
        return LocalDate(daysSinceEpoch: (local / 86_400).rounded(.down).clampedInt ?? 0)
    }
}

/// Where one planned occurrence falls in a participant's study: the study day (day 1 is the day of enrolment, in
/// the participant's local time), the occurrence within that day and the running count of occurrences.
public struct OccurrenceNumber: Sendable, Equatable {
    public let dayN: Int
    public let beepN: Int
    public let obsN: Int

    public init(dayN: Int, beepN: Int, obsN: Int) {
        self.dayN = dayN
        self.beepN = beepN
        self.obsN = obsN
    }

    /// Numbers for occurrences planned at `scheduled` (any order); the result is in the same order.
    public static func number(_ scheduled: [Date], enrolledAt: Date, zones: ZoneHistory) -> [OccurrenceNumber] {
        let firstDay = zones.localDate(of: enrolledAt).daysSinceEpoch
        let order = scheduled.indices.sorted { (scheduled[$0], $0) < (scheduled[$1], $1) }
        var result = [OccurrenceNumber](repeating: OccurrenceNumber(dayN: 0, beepN: 0, obsN: 0), count: scheduled.count)
        var currentDay = Int.min
        var beep = 0
        for (position, index) in order.enumerated() {
            let day = zones.localDate(of: scheduled[index]).daysSinceEpoch - firstDay + 1
            beep = day == currentDay ? beep + 1 : 1
            currentDay = day
            result[index] = OccurrenceNumber(dayN: day, beepN: beep, obsN: position + 1)
        }
        return result
    }
}

/// How a participant kept up on one study day: occurrences that had opened by the time of the export, those
/// answered, those that closed unanswered, those still open. The rate is the share answered of those answered or
/// closed, as the console reports compliance.
public struct DayCompliance: Sendable, Equatable {
    public var planned = 0
    public var answered = 0
    public var expired = 0
    public var open = 0

    public init() {}

    public var rate: Double? {
        let due = answered + expired
        return due == 0 ? nil : Double(answered) / Double(due)
    }

    /// Counts an occurrence by its status at the time of the export; future, cancelled and deactivated ones are
    /// not work the participant could do.
    public mutating func count(_ status: PromptStatus) {
        switch status {
        case .completed: answered += 1
        case .expired: expired += 1
        case .open: open += 1
        case .scheduled, .cancelled, .inactive: return
        }
        planned += 1
    }
}
