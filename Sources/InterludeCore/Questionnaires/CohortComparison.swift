import Foundation

/// When a study shows participants how their results compare with everyone's.
public enum ComparisonVisibility: String, Codable, Sendable, CaseIterable {
    case off
    /// While the study runs and after.
    case always
    /// Only once the study has ended, so that seeing it cannot change how people answer.
    case afterEnd
}

/// A person's mean of one score against all participants' means: the median and the middle half (first to third
/// quartile) of everyone's per-person means. Never a rank, and only with enough people that no one stands out.
public struct CohortComparison: Sendable, Equatable {
    /// Fewer people than this and nothing about the cohort is shown.
    public static let minimumContributors = 10

    public let personMean: Double
    /// How many of the person's answers the mean is over.
    public let personCount: Int
    public let median: Double
    public let lowerQuartile: Double
    public let upperQuartile: Double
    /// People with at least one value, the person included.
    public let contributors: Int

    /// The comparison of `person`'s values with everyone's, each person weighing once; nil when the person has
    /// no value or fewer than `minimumContributors` people have any.
    public static func compare<Person: Hashable>(_ person: Person, values: [Person: [Double]]) -> CohortComparison? {
        let means = values.compactMapValues { list -> Double? in
            let finite = list.filter(\.isFinite)
            return finite.isEmpty ? nil : finite.reduce(0, +) / Double(finite.count)
        }
        guard let own = means[person], means.count >= minimumContributors else { return nil }
        let sorted = means.values.sorted()
        return CohortComparison(
            personMean: own, personCount: values[person]?.filter(\.isFinite).count ?? 0, median: quantile(sorted, 0.5),
            lowerQuartile: quantile(sorted, 0.25), upperQuartile: quantile(sorted, 0.75), contributors: sorted.count)
    }

    /// The `p` quantile of sorted values, interpolated linearly between the two nearest ranks (the common
    /// default of R and NumPy).
    public static func quantile(_ sorted: [Double], _ p: Double) -> Double {
        guard let first = sorted.first else { return .nan }
        let position = p * Double(sorted.count - 1)
        let lower = Int(position.rounded(.down))
        let upper = min(lower + 1, sorted.count - 1)
        guard lower < sorted.count - 1 else { return sorted.last ?? first }
        return sorted[lower] + (sorted[upper] - sorted[lower]) * (position - Double(lower))
    }
}
