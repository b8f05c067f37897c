import Foundation

/// What an instrument may ask the app to capture while it is answered.
public enum ContextKind: String, Codable, Sendable, Hashable, CaseIterable {
    /// The device's position, with its accuracy and when it was taken.
    case location
    /// The background noise level in dBFS, measured on the device over a few seconds.
    case noise
}

/// Where and in what surroundings a questionnaire was answered, measured on the person's device: the position,
/// and the background noise level (never the sound itself).
public struct AnswerContext: Codable, Sendable, Equatable {
    public struct Location: Codable, Sendable, Equatable {
        public var latitude: Double
        public var longitude: Double
        /// The radius of uncertainty in metres, as the device reports it.
        public var accuracyM: Double
        public var capturedAt: Date
    }

    public struct Noise: Codable, Sendable, Equatable {
        /// The mean level relative to the microphone's full scale, ≤ 0.
        public var dbfs: Double
        public var durationS: Double
        public var capturedAt: Date
    }

    public static let maxAccuracyM = 100_000.0
    public static let dbfsRange = -200.0...0
    public static let maxDurationS = 60.0

    public var location: Location?
    public var noise: Noise?

    public var isEmpty: Bool { location == nil && noise == nil }

    /// Checks each value's range; a value outside names its field under `context`.
    public static func validate(
        location: (latitude: Double, longitude: Double, accuracyM: Double, capturedAt: Date)?,
        noise: (dbfs: Double, durationS: Double, capturedAt: Date)?
    ) throws(ValidationFailure) -> AnswerContext {
        var validator = FieldValidator()
        func check(_ value: Double, _ range: ClosedRange<Double>, _ field: String) {
            if !value.isFinite || !range.contains(value) { validator.add("context.\(field)", .outOfRange) }
        }
        if let location {
            check(location.latitude, -90...90, "location.latitude")
            check(location.longitude, -180...180, "location.longitude")
            check(location.accuracyM, 0...maxAccuracyM, "location.accuracyM")
        }
        if let noise {
            check(noise.dbfs, dbfsRange, "noise.dbfs")
            check(noise.durationS, 0...maxDurationS, "noise.durationS")
            if noise.durationS == 0 { validator.add("context.noise.durationS", .outOfRange) }
        }
        try validator.check()
        return AnswerContext(
            location: location.map {
                Location(
                    latitude: $0.latitude, longitude: $0.longitude, accuracyM: $0.accuracyM, capturedAt: $0.capturedAt)
            },
            noise: noise.map { Noise(dbfs: $0.dbfs, durationS: $0.durationS, capturedAt: $0.capturedAt) })
    }

    /// What may be kept of it: nothing where the person declined context for the study, and only what the
    /// instrument asks for.
    public func kept(granted: Bool, asked: [ContextKind]) -> AnswerContext? {
        guard granted else { return nil }
        let kept = AnswerContext(
            location: asked.contains(.location) ? location : nil, noise: asked.contains(.noise) ? noise : nil)
        return kept.isEmpty ? nil : kept
    }
}
