import Foundation

/// A computed score and what it means.
public struct ScoreResult: Codable, Hashable, Sendable {
    public var id: String
    /// Nil when too few items were answered to compute it.
    public var value: Double?
    public var band: Band?

    public init(id: String, value: Double?, band: Band?) {
        self.id = id
        self.value = value
        self.band = band
    }
}

extension InstrumentDefinition {
    /// Every score rule applied to `answers` (answers to hidden items do not count).
    public func scores(for answers: Answers) -> [ScoreResult] {
        scores(for: answers, visible: InstrumentLogic(self).visibility(answers))
    }

    func scores(for answers: Answers, visible: Visibility) -> [ScoreResult] {
        scores.map { rule in
            let value = rule.compute { itemID in
                guard visible.items.contains(itemID), let item = item(itemID),
                    InstrumentLogic.isAnswered(answers[itemID]), let answer = answers[itemID]
                else { return nil }
                return numericValue(of: answer, for: item)
            } reverse: { itemID in
                item(itemID).flatMap(valueRange(of:))
            }
            return ScoreResult(id: rule.id, value: value, band: value.flatMap { rule.band(for: $0) })
        }
    }

    /// What an answer contributes to a score.
    public func numericValue(of answer: AnswerValue, for item: Item) -> Double? {
        switch (item.type, answer) {
        case (.single, .text(let code)):
            return options(of: item).first { $0.code == code }?.numericValue
        case (.multiple, .list(let codes)):
            let chosen = options(of: item).filter { codes.contains($0.code) }
            return chosen.reduce(0) { $0 + ($1.numericValue ?? 0) }
        case (.boolean, .bool(let value)):
            return value ? 1 : 0
        case (.scale, .number(let value)), (.slider, .number(let value)), (.number, .number(let value)):
            return value
        default:
            return nil
        }
    }

    /// The lowest and highest value an item can contribute; nil for items without a finite range.
    public func valueRange(of item: Item) -> ClosedRange<Double>? {
        switch item.type {
        case .single:
            let values = options(of: item).compactMap(\.numericValue)
            guard let low = values.min(), let high = values.max() else { return nil }
            return low...high
        case .multiple:
            let values = options(of: item).compactMap(\.numericValue)
            guard !values.isEmpty else { return nil }
            return values.filter { $0 < 0 }.reduce(0, +)...values.filter { $0 > 0 }.reduce(0, +)
        case .boolean:
            return 0...1
        case .scale, .slider, .number:
            guard let low = item.min, let high = item.max, low <= high else { return nil }
            return low...high
        default:
            return nil
        }
    }

    /// The lowest and highest value a score can take, for checking its bands.
    public func range(of rule: ScoreRule) -> ClosedRange<Double>? {
        let ranges = rule.items.compactMap { item($0).flatMap(valueRange(of:)) }
        guard ranges.count == rule.items.count, !ranges.isEmpty else { return nil }
        let low: Double
        let high: Double
        switch rule.method {
        case .sum:
            low = ranges.reduce(0) { $0 + $1.lowerBound }
            high = ranges.reduce(0) { $0 + $1.upperBound }
        case .mean:
            low = ranges.map(\.lowerBound).min()!
            high = ranges.map(\.upperBound).max()!
        }
        let scaled = [low * rule.factor, high * rule.factor]
        return ScoreRule.rounded(scaled.min()!, rule.decimals)...ScoreRule.rounded(scaled.max()!, rule.decimals)
    }
}

extension ScoreRule {
    /// The score from item values (`value` nil for a missing item) with reverse coding over each item's range.
    func compute(value: (String) -> Double?, reverse range: (String) -> ClosedRange<Double>?) -> Double? {
        var values: [Double] = []
        for itemID in items {
            guard var itemValue = value(itemID) else { continue }
            if reverse.contains(itemID), let itemRange = range(itemID) {
                itemValue = itemRange.lowerBound + itemRange.upperBound - itemValue
            }
            values.append(itemValue)
        }
        guard !values.isEmpty, values.count >= (minAnswered ?? items.count) else { return nil }
        let total = values.reduce(0, +)
        let raw: Double
        switch method {
        case .sum:
            raw = prorate && values.count < items.count ? total * Double(items.count) / Double(values.count) : total
        case .mean:
            raw = total / Double(values.count)
        }
        return Self.rounded(raw * factor, decimals)
    }

    /// The band `value` falls in, if any.
    public func band(for value: Double) -> Band? {
        bands.first { value >= $0.min - 1e-9 && value <= $0.max + 1e-9 }
    }

    /// Half away from zero, to `decimals` places.
    static func rounded(_ value: Double, _ decimals: Int) -> Double {
        let scale = pow(10, Double(decimals))
        return (value * scale).rounded(.toNearestOrAwayFromZero) / scale
    }

    /// The smallest difference between two scores.
    public var resolution: Double { pow(10, -Double(decimals)) }
}
