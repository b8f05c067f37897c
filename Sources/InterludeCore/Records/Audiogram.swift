import Foundation

/// One hearing test: thresholds per ear and frequency in dB HL, as an audiologist writes them down.
public struct Audiogram: Codable, Sendable, Equatable {
    public enum Ear: String, Sendable, Codable, CaseIterable {
        case right
        case left
    }

    public enum Conduction: String, Sendable, Codable, CaseIterable {
        case air
        case bone
    }

    public struct Point: Codable, Sendable, Equatable {
        public var ear: Ear
        public var frequencyHz: Int
        /// Nil when the person did not respond at the loudest level tested.
        public var thresholdDbHL: Int?
        public var conduction: Conduction
        public var masked: Bool

        public init(
            ear: Ear, frequencyHz: Int, thresholdDbHL: Int?, conduction: Conduction = .air, masked: Bool = false
        ) {
            self.ear = ear
            self.frequencyHz = frequencyHz
            self.thresholdDbHL = thresholdDbHL
            self.conduction = conduction
            self.masked = masked
        }
    }

    /// The frequencies every audiogram form offers.
    public static let standardFrequencies = [125, 250, 500, 1000, 2000, 4000, 8000]
    /// Intermediate and extended frequencies an audiologist may add.
    public static let customFrequencies = [750, 1500, 3000, 6000, 10000, 12500, 16000]
    public static let frequencyRange = 125...20000
    public static let thresholdRange = -10...120
    public static let thresholdStep = 5
    public static let maxPoints = 2 * 2 * 24

    public var measuredAt: Date
    public var points: [Point]

    public init(measuredAt: Date, points: [Point]) {
        self.measuredAt = measuredAt
        self.points = points
    }

    /// A point as it arrives, before checking.
    public struct RawPoint: Sendable {
        public var ear: String?
        public var frequencyHz: Int?
        public var thresholdDbHL: Int?
        public var conduction: String?
        public var masked: Bool?

        public init(
            ear: String?, frequencyHz: Int?, thresholdDbHL: Int?, conduction: String? = nil, masked: Bool? = nil
        ) {
            self.ear = ear
            self.frequencyHz = frequencyHz
            self.thresholdDbHL = thresholdDbHL
            self.conduction = conduction
            self.masked = masked
        }
    }

    /// Checks a measurement: a date, at least one point, each with an ear, a frequency in range, a threshold from
    /// −10 to 120 dB HL in 5 dB steps (or none for no response), and no ear, frequency and conduction twice.
    public static func validate(measuredAt: Date?, points raw: [RawPoint]) throws(ValidationFailure) -> Audiogram {
        var validator = FieldValidator()
        if measuredAt == nil { validator.add("measuredAt", .required) }
        if raw.isEmpty { validator.add("points", .required) }
        if raw.count > maxPoints { validator.add("points", .tooLong, limit: maxPoints) }
        var points: [Point] = []
        var seen: Set<String> = []
        for (index, point) in raw.prefix(maxPoints).enumerated() {
            let field = "points.\(index)"
            let ear = point.ear.flatMap(Ear.init(rawValue:))
            if ear == nil { validator.add("\(field).ear", point.ear == nil ? .required : .notAnOption) }
            let conduction = point.conduction.map(Conduction.init(rawValue:)) ?? .air
            if conduction == nil { validator.add("\(field).conduction", .notAnOption) }
            if let frequency = point.frequencyHz {
                if !frequencyRange.contains(frequency) {
                    validator.add("\(field).frequencyHz", .outOfRange, limit: frequencyRange.upperBound)
                }
            } else {
                validator.add("\(field).frequencyHz", .required)
            }
            if let threshold = point.thresholdDbHL {
                if !thresholdRange.contains(threshold) {
                    validator.add("\(field).thresholdDbHL", .outOfRange, limit: thresholdRange.upperBound)
                } else if threshold % thresholdStep != 0 {
                    validator.add("\(field).thresholdDbHL", .invalidValue)
                }
            }
            guard let ear, let conduction, let frequency = point.frequencyHz else { continue }
            if !seen.insert("\(ear)-\(frequency)-\(conduction)").inserted {
                validator.add("\(field).frequencyHz", .duplicate)
            }
            points.append(
                Point(
                    ear: ear, frequencyHz: frequency, thresholdDbHL: point.thresholdDbHL, conduction: conduction,
                    masked: point.masked ?? false))
        }
        try validator.check()
        return Audiogram(
            measuredAt: measuredAt!,
            points: points.sorted { ($0.ear.rawValue, $0.frequencyHz) < ($1.ear.rawValue, $1.frequencyHz) })
    }

    /// One ear's points of one conduction, by frequency.
    public func curve(_ ear: Ear, _ conduction: Conduction = .air) -> [Point] {
        points.filter { $0.ear == ear && $0.conduction == conduction }.sorted { $0.frequencyHz < $1.frequencyHz }
    }

    /// The pure-tone average of 500, 1000, 2000 and 4000 Hz by air (nil when one is missing or had no response).
    public func pureToneAverage(_ ear: Ear) -> Double? {
        let values = [500, 1000, 2000, 4000].map { frequency in
            curve(ear).first { $0.frequencyHz == frequency }?.thresholdDbHL
        }
        guard values.allSatisfy({ $0 != nil }) else { return nil }
        return Double(values.compactMap { $0 }.reduce(0, +)) / 4
    }

    /// The hearing-loss grade bands drawn behind an audiogram, by their upper threshold in dB HL.
    public enum Band: String, Sendable, CaseIterable {
        case normal
        case mild
        case moderate
        case moderatelySevere
        case severe
        case profound

        public var range: ClosedRange<Int> {
            switch self {
            case .normal: -10...20
            case .mild: 20...35
            case .moderate: 35...50
            case .moderatelySevere: 50...65
            case .severe: 65...80
            case .profound: 80...120
            }
        }

        /// The band a threshold or average falls in; a value on a boundary belongs to the milder band.
        public static func of(_ value: Double) -> Band {
            allCases.first { value <= Double($0.range.upperBound) } ?? .profound
        }
    }
}
