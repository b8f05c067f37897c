import Foundation

/// Stretches of time with the kinds of records each covers: when a study may export a participant's records of a
/// kind (while the enrolment was active and a consent decision in force named the kind), or when a person declined
/// to let their therapist read them.
public struct KindPeriods: Sendable, Equatable {
    public struct Period: Sendable, Equatable {
        public var start: Date
        /// Open when nil.
        public var end: Date?
        public var kinds: Set<RecordKind>

        public init(start: Date, end: Date?, kinds: Set<RecordKind>) {
            self.start = start
            self.end = end
            self.kinds = kinds
        }

        func contains(_ moment: Date) -> Bool {
            start <= moment && end.map { moment < $0 } != false
        }
    }

    public var periods: [Period]

    public init(_ periods: [Period]) {
        self.periods = periods
    }

    /// Whether a record of `kind` at `moment` falls in a period that covers its kind (a thought's occurrences go
    /// with thoughts).
    public func covers(_ kind: RecordKind, at moment: Date) -> Bool {
        periods.contains { $0.kinds.contains(kind.collectedWith) && $0.contains(moment) }
    }

    /// The periods cut to the stretch from `start` to `end` (open when nil); those outside it go.
    public func within(start: Date, end: Date?) -> KindPeriods {
        KindPeriods(
            periods.compactMap { period in
                let from = max(period.start, start)
                let until = [period.end, end].compactMap { $0 }.min()
                if let until, until <= from { return nil }
                return Period(start: from, end: until, kinds: period.kinds)
            })
    }
}
