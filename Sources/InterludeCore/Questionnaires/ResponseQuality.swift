import Foundation

/// Signs of careless answering in one response, worked out when it arrives: how fast the items were answered, how
/// long the same answer ran, and how little the answers varied. They flag a response for a look; they prove
/// nothing, and nothing is refused for them.
///
/// Scale answers are those of single choices (an option's score when every option has one, else its position from 0;
/// the item's own options, else its section's shared scale), scales and sliders, in the order the instrument asks
/// them.
public struct ResponseQuality: Codable, Sendable, Equatable {
    /// How many scale items were answered.
    public var scaleItems: Int
    /// How many answered items came with the seconds spent on them.
    public var timedItems: Int
    /// The share of timed items answered in under `fastSeconds`.
    public var fastShare: Double?
    /// The median seconds spent on a timed item.
    public var medianSeconds: Double?
    /// The longest run of the same scale answer on consecutive scale items (longstring).
    public var longstring: Int
    /// The standard deviation of the scale answers, in the instrument's units (population SD, within the prompt).
    public var sd: Double?
    /// Intra-individual response variability: the standard deviation of the scale answers, each as a share of its
    /// item's range (0 the lowest answer, 1 the highest), so that prompts mixing scales compare.
    public var irv: Double?
    /// The share of scale answers equal to the response's most frequent one.
    public var modeShare: Double?
    public var flags: [Flag]

    public enum Flag: String, Codable, Sendable, CaseIterable {
        /// Many items answered in under a second.
        case fast
        /// The same answer on every scale item.
        case straightlined
        /// Answers crowded into a narrow band of the scales.
        case lowVariability = "low_variability"
    }

    /// An answer under a second is faster than a question can be read.
    public static let fastSeconds = 1.0

    /// When a response is flagged; a study may set its own, these are the defaults.
    public struct Thresholds: Codable, Sendable, Equatable {
        /// Flag `fast` at this share of timed items under a second, with at least `minimumItems` timed.
        public var fastShare: Double
        /// Flag `straightlined` and `lowVariability` only with at least this many scale answers (and `fast` with as
        /// many timed items): in a short prompt the same answer throughout is often honest.
        public var minimumItems: Int
        /// Flag `lowVariability` below this IRV.
        public var irvBelow: Double

        public static let standard = Thresholds(fastShare: 0.5, minimumItems: 5, irvBelow: 0.05)

        public init(fastShare: Double, minimumItems: Int, irvBelow: Double) {
            self.fastShare = fastShare
            self.minimumItems = minimumItems
            self.irvBelow = irvBelow
        }
    }

    /// The indices of `answers` to `definition`, given the seconds spent per item id, flagged by `thresholds`.
    public static func of(
        _ definition: InstrumentDefinition, answers: Answers, itemSeconds: [String: Double],
        thresholds: Thresholds = .standard
    ) -> ResponseQuality {
        let answered = definition.items.filter { $0.type.takesAnswer && answers[$0.id] != nil }
        let seconds = answered.compactMap { itemSeconds[$0.id] }.filter { $0.isFinite && $0 >= 0 }
        let scale = answered.compactMap { ScaleAnswer($0, answers[$0.id], options: definition.options(of: $0)) }
        let values = scale.map(\.value)
        let shares = scale.compactMap(\.share)
        var quality = ResponseQuality(
            scaleItems: scale.count, timedItems: seconds.count,
            fastShare: seconds.isEmpty
                ? nil : Double(seconds.filter { $0 < fastSeconds }.count) / Double(seconds.count),
            medianSeconds: median(seconds), longstring: longestRun(values),
            sd: values.count < 2 ? nil : standardDeviation(values),
            irv: shares.count < 2 ? nil : standardDeviation(shares),
            modeShare: values.isEmpty ? nil : Double(mostFrequentCount(values)) / Double(values.count), flags: [])
        if seconds.count >= thresholds.minimumItems, let fast = quality.fastShare, fast >= thresholds.fastShare {
            quality.flags.append(.fast)
        }
        if scale.count >= thresholds.minimumItems {
            if quality.longstring == scale.count { quality.flags.append(.straightlined) }
            if shares.count >= thresholds.minimumItems, let irv = quality.irv, irv < thresholds.irvBelow {
                quality.flags.append(.lowVariability)
            }
        }
        return quality
    }

    /// One scale answer: its value and, where the item's range is known, where it lies in it.
    private struct ScaleAnswer {
        let value: Double
        let share: Double?

        init?(_ item: Item, _ answer: AnswerValue?, options: [AnswerOption]) {
            switch (item.type, answer) {
            case (.single, .text(let code)?):
                guard let index = options.firstIndex(where: { $0.code == code }) else { return nil }
                let scores = options.compactMap(\.score)
                let scored = scores.count == options.count
                value = scored ? scores[index] : Double(index)
                let (low, high) = scored ? (scores.min() ?? 0, scores.max() ?? 0) : (0, Double(options.count - 1))
                share = high > low ? (value - low) / (high - low) : nil
            case (.scale, .number(let number)?), (.slider, .number(let number)?):
                value = number
                if let low = item.min, let high = item.max, high > low {
                    share = (number - low) / (high - low)
                } else {
                    share = nil
                }
            default:
                return nil
            }
        }
    }

    static func longestRun(_ values: [Double]) -> Int {
        var longest = 0
        var run = 0
        for (index, value) in values.enumerated() {
            run = index > 0 && values[index - 1] == value ? run + 1 : 1
            longest = max(longest, run)
        }
        return longest
    }

    static func mostFrequentCount(_ values: [Double]) -> Int {
        Dictionary(values.map { ($0, 1) }, uniquingKeysWith: +).values.max() ?? 0
    }

    static func standardDeviation(_ values: [Double]) -> Double {
        let mean = values.reduce(0, +) / Double(values.count)
        return (values.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / Double(values.count)).squareRoot()
    }

    static func median(_ values: [Double]) -> Double? {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }
}

extension ResponseQuality {
    /// The columns `prompts.csv` gives the indices of a prompt's response.
    public static let exportColumns = [
        "quality_flags", "fast_share", "median_item_seconds", "longstring", "sd", "irv", "mode_share",
    ]

    /// The values of `exportColumns`: the flags separated by spaces, nothing where an index could not be worked out.
    public var exportValues: [String?] {
        [
            flags.map(\.rawValue).joined(separator: " "), fastShare.map(CSV.number), medianSeconds.map(CSV.number),
            String(longstring), sd.map(CSV.number), irv.map(CSV.number), modeShare.map(CSV.number),
        ]
    }
}
