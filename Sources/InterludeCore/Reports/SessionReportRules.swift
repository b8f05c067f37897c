import Foundation

/// How a session report sums up a period: the spread of a questionnaire's values and which answers call for help.
public enum SessionReportRules {
    /// The number, mean, lowest and highest of a series of values.
    public struct Spread: Sendable, Equatable {
        public let count: Int
        public let mean: Double
        public let min: Double
        public let max: Double
    }

    /// The spread of the values; nil for none. The mean is rounded to two decimals.
    public static func spread(_ values: [Double]) -> Spread? {
        guard let lowest = values.min(), let highest = values.max() else { return nil }
        let mean = values.reduce(0, +) / Double(values.count)
        return Spread(count: values.count, mean: (mean * 100).rounded() / 100, min: lowest, max: highest)
    }

    /// The items of an answer that call for crisis help (PHQ-9 item 9 above "not at all"), by id.
    public static func crisisItems(in answers: Answers, of definition: InstrumentDefinition) -> [String] {
        StudyRule.crisisItems(of: definition.key).compactMap { clause in
            guard let item = definition.items.first(where: { $0.id == clause.id }), let answer = answers[item.id],
                let value = definition.numericValue(of: answer, for: item), let threshold = clause.value,
                clause.operator.holds(value, threshold)
            else { return nil }
            return item.id
        }
    }
}
