import Foundation

/// A kind of measurement a phone or watch takes (the eleven quantity types of the Anima study, with sleep, resting
/// heart rate, heart rate variability and body mass): its canonical UCUM unit, the units accepted and converted on
/// ingest, the physiological range a value must lie in, and how a day's values add up.
public enum SampleType: String, Sendable, Codable, CaseIterable {
    case heartRate
    case exerciseTime
    case headphoneAudioExposure
    case environmentalAudioExposure
    case stairAscentSpeed
    case stepCount
    case walkingDoubleSupport
    case walkingHeartRateAverage
    case walkingSpeed
    case walkingStepLength
    case distanceWalkingRunning
    case sleepAnalysis
    case restingHeartRate
    case heartRateVariabilitySDNN
    case bodyMass

    /// How the values of one day make that day's value.
    public enum DailyAggregate: String, Sendable {
        /// Steps, distance, minutes: the day's values add up.
        case sum
        /// Rates, levels, speeds: the day's values are averaged.
        case mean
    }

    /// The UCUM unit values are stored and exported in.
    public var unit: String {
        switch self {
        case .heartRate, .walkingHeartRateAverage, .restingHeartRate: "/min"
        case .exerciseTime, .sleepAnalysis: "min"
        case .headphoneAudioExposure, .environmentalAudioExposure: "dB"
        case .stairAscentSpeed, .walkingSpeed: "m/s"
        case .stepCount: "{steps}"
        case .walkingDoubleSupport: "%"
        case .walkingStepLength, .distanceWalkingRunning: "m"
        case .heartRateVariabilitySDNN: "ms"
        case .bodyMass: "kg"
        }
    }

    /// The units a value may arrive in, each with the factor that turns it into `unit`. HealthKit's unit strings
    /// are among them, so an Apple Health export is read as it is.
    public var acceptedUnits: [String: Double] {
        switch self {
        case .heartRate, .walkingHeartRateAverage, .restingHeartRate:
            ["/min": 1, "count/min": 1, "{beats}/min": 1, "bpm": 1, "1/min": 1, "count/s": 60]
        case .exerciseTime, .sleepAnalysis:
            ["min": 1, "h": 60, "hr": 60, "s": 1.0 / 60]
        case .headphoneAudioExposure, .environmentalAudioExposure:
            ["dB": 1, "dBASPL": 1, "dB(A)": 1, "dBA": 1, "dB[SPL]": 1]
        case .stairAscentSpeed, .walkingSpeed:
            ["m/s": 1, "km/h": 1 / 3.6, "km/hr": 1 / 3.6, "mi/h": 0.447_04, "mi/hr": 0.447_04, "ft/s": 0.3048]
        case .stepCount:
            ["{steps}": 1, "count": 1, "1": 1, "steps": 1]
        case .walkingDoubleSupport:
            ["%": 1, "1": 100]
        case .walkingStepLength, .distanceWalkingRunning:
            [
                "m": 1, "km": 1000, "cm": 0.01, "mi": 1609.344, "[mi_i]": 1609.344, "ft": 0.3048, "[ft_i]": 0.3048,
                "in": 0.0254,
                "[in_i]": 0.0254, "yd": 0.9144,
            ]
        case .heartRateVariabilitySDNN:
            ["ms": 1, "s": 1000]
        case .bodyMass:
            ["kg": 1, "g": 0.001, "lb": 0.453_592_37, "[lb_av]": 0.453_592_37, "st": 6.350_293_18]
        }
    }

    /// Where a value in `unit` must lie to be a measurement of a living person (a sample's value, not a day's).
    public var range: ClosedRange<Double> {
        switch self {
        case .heartRate, .walkingHeartRateAverage: 20...260
        case .restingHeartRate: 20...200
        case .exerciseTime: 0...1440
        case .sleepAnalysis: 0...1440
        case .headphoneAudioExposure, .environmentalAudioExposure: 0...150
        case .stairAscentSpeed: 0...5
        case .walkingSpeed: 0...6
        case .stepCount: 0...200_000
        case .walkingDoubleSupport: 0...100
        case .walkingStepLength: 0...3
        case .distanceWalkingRunning: 0...500_000
        case .heartRateVariabilitySDNN: 0...1000
        case .bodyMass: 0.5...650
        }
    }

    public var dailyAggregate: DailyAggregate {
        switch self {
        case .exerciseTime, .sleepAnalysis, .stepCount, .distanceWalkingRunning: .sum
        default: .mean
        }
    }

    /// The type's identifier in Apple Health.
    public var healthKitIdentifier: String {
        switch self {
        case .sleepAnalysis: "HKCategoryTypeIdentifierSleepAnalysis"
        case .heartRateVariabilitySDNN: "HKQuantityTypeIdentifierHeartRateVariabilitySDNN"
        case .walkingDoubleSupport: "HKQuantityTypeIdentifierWalkingDoubleSupportPercentage"
        case .exerciseTime: "HKQuantityTypeIdentifierAppleExerciseTime"
        default: "HKQuantityTypeIdentifier" + rawValue.prefix(1).uppercased() + rawValue.dropFirst()
        }
    }

    /// The type an Apple Health identifier names, if it is one of ours.
    public init?(healthKitIdentifier: String) {
        guard let type = Self.allCases.first(where: { $0.healthKitIdentifier == healthKitIdentifier }) else {
            return nil
        }
        self = type
    }

    /// A value in `unit` (as sent) converted to the canonical unit, or nil when the unit is not one of the type's.
    public func canonical(_ value: Double, unit sent: String) -> Double? {
        acceptedUnits[sent.trimmingCharacters(in: .whitespaces)].map { value * $0 }
    }
}

extension SampleType {
    /// One day's value of a type: the sum or mean of the samples that began that day, and how many there were.
    public struct Day: Sendable, Equatable {
        public var value: Double
        public var count: Int

        public init(value: Double, count: Int) {
            self.value = value
            self.count = count
        }

        /// One more value, summed; a mean divides by `count` at the end.
        public mutating func add(_ more: Double) {
            value += more
            count += 1
        }
    }

    /// Values by the day they began in `zone`, added up as the type adds up.
    public func daily(_ values: [(value: Double, start: Date)], in zone: TimeZone) -> [LocalDate: Day] {
        dailyAggregate.days(values, in: zone)
    }
}

extension SampleType.DailyAggregate {
    /// Values by the day they began in `zone`, summed or averaged.
    public func days(_ values: [(value: Double, start: Date)], in zone: TimeZone) -> [LocalDate: SampleType.Day] {
        var sums: [LocalDate: SampleType.Day] = [:]
        for (value, start) in values {
            sums[LocalDate(start, in: zone), default: SampleType.Day(value: 0, count: 0)].add(value)
        }
        guard self == .mean else { return sums }
        return sums.mapValues { SampleType.Day(value: $0.value / Double($0.count), count: $0.count) }
    }
}
