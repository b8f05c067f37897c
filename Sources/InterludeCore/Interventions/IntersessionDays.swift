import Foundation

/// The Intersession-Daily day by day: how many were answered, in how many the patient had thought of therapy,
/// and how they felt on average when they had (5 very positive … 1 very negative).
public struct IntersessionDay: Equatable, Sendable {
    public var date: LocalDate
    public var answered: Int
    public var thought: Int
    public var meanFeeling: Double?

    /// The share of answered Dailies in which the patient had thought of therapy, 0 to 1.
    public var thoughtShare: Double { answered == 0 ? 0 : Double(thought) / Double(answered) }

    /// One Daily response: whether the patient thought of therapy and, if so, how they felt.
    public struct Entry: Sendable {
        public var completedAt: Date
        public var thought: Bool
        public var feeling: Int?

        public init(completedAt: Date, thought: Bool, feeling: Int?) {
            self.completedAt = completedAt
            self.thought = thought
            self.feeling = feeling
        }

        /// Reads a response to the Intersession-Daily (items `thought` and `feeling`); nil for anything else.
        public init?(completedAt: Date, answers: Answers) {
            guard case .bool(let thought) = answers["thought"] else { return nil }
            self.init(
                completedAt: completedAt, thought: thought,
                feeling: thought ? answers["feeling"]?.text.flatMap { Int($0) } : nil)
        }
    }

    public static let instrumentKey = "intersession-daily"

    /// One day per local date that has answers, oldest first.
    public static func days(_ entries: [Entry], in zone: TimeZone) -> [IntersessionDay] {
        let byDate = Dictionary(grouping: entries) { LocalDate($0.completedAt, in: zone) }
        return byDate.keys.sorted().map { date in
            let group = byDate[date]!
            let feelings = group.compactMap(\.feeling)
            return IntersessionDay(
                date: date, answered: group.count, thought: group.filter(\.thought).count,
                meanFeeling: feelings.isEmpty ? nil : Double(feelings.reduce(0, +)) / Double(feelings.count))
        }
    }
}
