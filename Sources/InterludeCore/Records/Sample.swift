import Foundation

/// One measurement from a phone, a watch or an import: a type, a value in the type's canonical unit, the time it
/// covers, where it came from, and the source's own id, which makes a re-upload change nothing.
public struct Sample: Sendable, Equatable, Codable {
    /// HealthKit's heart-rate motion context.
    public enum MotionContext: Int, Sendable, Codable, CaseIterable {
        case notSet = 0
        case sedentary = 1
        case active = 2
    }

    /// The app and device that took the sample; none of it identifies the person.
    public struct Source: Sendable, Equatable, Codable {
        public var app: String?
        public var deviceName: String?
        public var deviceModel: String?
        public var osVersion: String?

        public init(app: String? = nil, deviceName: String? = nil, deviceModel: String? = nil, osVersion: String? = nil)
        {
            self.app = app
            self.deviceName = deviceName
            self.deviceModel = deviceModel
            self.osVersion = osVersion
        }
    }

    public static let sourceIDMaxLength = 200
    public static let sourceTextMaxLength = 200
    /// The longest time one sample may cover (a day's total, with a margin for a day of 25 hours).
    public static let longestSpan: TimeInterval = 26 * 3600
    /// How far ahead of the server's clock a sample may end, for a phone whose clock runs fast.
    public static let clockTolerance: TimeInterval = 10 * 60
    public static let batchLimit = 5000

    public var type: SampleType
    public var value: Double
    public var start: Date
    public var end: Date
    public var sourceID: String
    public var source: Source
    public var motionContext: MotionContext?

    public init(
        type: SampleType, value: Double, start: Date, end: Date, sourceID: String, source: Source = Source(),
        motionContext: MotionContext? = nil
    ) {
        self.type = type
        self.value = value
        self.start = start
        self.end = end
        self.sourceID = sourceID
        self.source = source
        self.motionContext = motionContext
    }

    /// A sample as it arrives, before checking.
    public struct Raw: Sendable {
        public var type: String?
        public var value: Double?
        public var unit: String?
        public var start: Date?
        public var end: Date?
        public var sourceID: String?
        public var source: Source
        public var motionContext: Int?
        /// Fields that were sent but could not be read (a malformed date): refused as such, not as missing.
        public var unreadable: Set<String> = []

        public init(
            type: String?, value: Double?, unit: String?, start: Date?, end: Date?, sourceID: String?,
            source: Source = Source(), motionContext: Int? = nil
        ) {
            self.type = type
            self.value = value
            self.unit = unit
            self.start = start
            self.end = end
            self.sourceID = sourceID
            self.source = source
            self.motionContext = motionContext
        }
    }

    /// Checks one sample, naming its fields under `prefix` (`samples[3]`): a known type, a unit of that type, the
    /// converted value inside the type's range, a start not after the end, at most a day covered, not ending in the
    /// future, a source id, and source texts on one line.
    public static func validate(_ raw: Raw, now: Date, prefix: String = "") throws(ValidationFailure) -> Sample {
        var validator = FieldValidator()
        func field(_ name: String) -> String { prefix.isEmpty ? name : "\(prefix).\(name)" }
        let type = raw.type.flatMap(SampleType.init(rawValue:))
        if type == nil { validator.add(field("type"), (raw.type ?? "").isEmpty ? .required : .notAnOption) }
        var value: Double?
        if raw.value == nil, raw.unreadable.contains("value") {
            validator.add(field("value"), .invalidFormat)
        } else if let sent = validator.number(raw.value, field: field("value"), required: true), let type {
            if let unit = raw.unit, !unit.isEmpty {
                if let converted = type.canonical(sent, unit: unit) {
                    value = validator.number(converted, field: field("value"), in: type.range)
                } else {
                    validator.add(field("unit"), .notAnOption)
                }
            } else {
                validator.add(field("unit"), .required)
            }
        }
        if raw.start == nil {
            validator.add(field("startsAt"), raw.unreadable.contains("startsAt") ? .invalidFormat : .required)
        }
        if raw.end == nil {
            validator.add(field("endsAt"), raw.unreadable.contains("endsAt") ? .invalidFormat : .required)
        }
        if let start = raw.start, let end = raw.end {
            if end < start {
                validator.add(field("endsAt"), .outOfRange)
            } else if end.timeIntervalSince(start) > longestSpan {
                validator.add(field("endsAt"), .tooLong, limit: Int(longestSpan / 3600))
            }
            if end > now.addingTimeInterval(clockTolerance) { validator.add(field("endsAt"), .afterDeadline) }
        }
        let sourceID = validator.text(raw.sourceID, field: field("sourceId"), maxLength: sourceIDMaxLength)
        let source = Source(
            app: validator.text(
                raw.source.app, field: field("source.app"), required: false, maxLength: sourceTextMaxLength),
            deviceName: validator.text(
                raw.source.deviceName, field: field("source.deviceName"), required: false,
                maxLength: sourceTextMaxLength),
            deviceModel: validator.text(
                raw.source.deviceModel, field: field("source.deviceModel"), required: false,
                maxLength: sourceTextMaxLength),
            osVersion: validator.text(
                raw.source.osVersion, field: field("source.osVersion"), required: false, maxLength: sourceTextMaxLength)
        )
        var motion: MotionContext?
        if let context = raw.motionContext {
            motion = MotionContext(rawValue: context)
            if motion == nil { validator.add(field("motionContext"), .notAnOption) }
        }
        try validator.check()
        return Sample(
            type: type!, value: value!, start: raw.start!, end: raw.end!, sourceID: sourceID!, source: source,
            motionContext: motion)
    }

    /// What came of a batch: the samples to keep with their index, and the problems of the others by index.
    public struct Batch: Sendable {
        public var accepted: [(index: Int, sample: Sample)]
        public var rejected: [(index: Int, errors: [FieldError])]
    }

    /// Checks every sample of a batch on its own, so valid ones are kept while each invalid one is reported by its
    /// index; the same source id twice in a batch keeps the first. A batch over the limit is refused whole.
    public static func validate(batch raw: [Raw], now: Date) throws(ValidationFailure) -> Batch {
        if raw.count > batchLimit { throw ValidationFailure(field: "samples", code: .tooLong, limit: batchLimit) }
        var batch = Batch(accepted: [], rejected: [])
        var seen: Set<String> = []
        for (index, item) in raw.enumerated() {
            do {
                let sample = try validate(item, now: now, prefix: "samples[\(index)]")
                if seen.insert(sample.sourceID).inserted {
                    batch.accepted.append((index, sample))
                } else {
                    batch.rejected.append((index, [FieldError(field: "samples[\(index)].sourceId", code: .duplicate)]))
                }
            } catch {
                batch.rejected.append((index, error.errors))
            }
        }
        return batch
    }
}
