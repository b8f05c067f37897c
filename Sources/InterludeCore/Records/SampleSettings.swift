import Foundation

/// What a study asks a person's phone for: the sample types, each with the reason the person reads before they
/// enable it, and the collection window. Nothing is collected until a study names a type and the person enables it.
public struct SampleSettings: Sendable, Equatable, Codable {
    public static let purposeMaxLength = 2000
    public static let windowDaysLimit = 365

    /// One type the study asks for, and why (in English, German or both; stored before as one plain text).
    public struct Request: Sendable, Equatable, Codable {
        public var type: SampleType
        public var purpose: LocalizedText

        public init(type: SampleType, purpose: LocalizedText) {
            self.type = type
            self.purpose = purpose
        }
    }

    /// In the order of `SampleType.allCases`, each type at most once.
    public var requests: [Request]
    /// Samples are kept from this many days before the person's first mood report up to their last one; nil keeps
    /// them whenever they were taken.
    public var windowDays: Int?

    public init(requests: [Request] = [], windowDays: Int? = nil) {
        self.requests = requests.sorted { $0.type.order < $1.type.order }
        self.windowDays = windowDays
    }

    public var types: [SampleType] { requests.map(\.type) }

    /// Checks settings as entered: known types, each once, each with a purpose in one language or both; a window of
    /// 0 to 365 days.
    public static func validate(requests: [(type: String?, purpose: [Language: String?])], windowDays: Int?)
        throws(ValidationFailure)
        -> SampleSettings
    {
        var validator = FieldValidator()
        var accepted: [Request] = []
        for (index, raw) in requests.enumerated() {
            let type = raw.type.flatMap(SampleType.init(rawValue:))
            if type == nil { validator.add("sampleTypes[\(index)].type", .notAnOption) }
            let purpose = validator.texts(
                raw.purpose, field: "sampleTypes[\(index)].purpose", perLanguage: "sampleTypes[\(index)].purposes",
                maxLength: purposeMaxLength, lines: .multiple)
            guard let type, let purpose else { continue }
            if accepted.contains(where: { $0.type == type }) {
                validator.add("sampleTypes[\(index)].type", .duplicate)
            } else {
                accepted.append(Request(type: type, purpose: purpose))
            }
        }
        if let windowDays, !(0...windowDaysLimit).contains(windowDays) {
            validator.add("windowDays", .outOfRange, limit: windowDaysLimit)
        }
        try validator.check()
        return SampleSettings(requests: accepted, windowDays: windowDays)
    }
}

extension SampleType {
    /// The type's place in every list.
    public var order: Int { Self.allCases.firstIndex(of: self) ?? 0 }
}

/// What a person's studies ask of them together: per type, each study's reason and the widest window.
public struct SampleCollection: Sendable, Equatable {
    /// One asked type: the reasons the studies give, and the window (nil when a study keeps samples at any time).
    public struct Asked: Sendable, Equatable {
        public var purposes: [LocalizedText]
        public var windowDays: Int?

        public init(purposes: [LocalizedText], windowDays: Int?) {
            self.purposes = purposes
            self.windowDays = windowDays
        }
    }

    public var asked: [SampleType: Asked]

    public init(asked: [SampleType: Asked] = [:]) {
        self.asked = asked
    }

    /// The types in the order they are listed everywhere.
    public var types: [SampleType] { SampleType.allCases.filter { asked[$0] != nil } }

    /// Several studies together: a type is asked if any study asks for it, and limited to a window only if every
    /// study asking for it sets one, then the longest.
    public static func union(_ settings: [SampleSettings]) -> SampleCollection {
        var asked: [SampleType: Asked] = [:]
        for study in settings {
            for request in study.requests {
                guard var entry = asked[request.type] else {
                    asked[request.type] = Asked(purposes: [request.purpose], windowDays: study.windowDays)
                    continue
                }
                if !entry.purposes.contains(request.purpose) { entry.purposes.append(request.purpose) }
                entry.windowDays = entry.windowDays.flatMap { days in study.windowDays.map { max(days, $0) } }
                asked[request.type] = entry
            }
        }
        return SampleCollection(asked: asked)
    }

    /// The span of a person's mood reports, which the collection window hangs on.
    public struct MoodSpan: Sendable, Equatable {
        public var first: Date
        public var last: Date

        public init(first: Date, last: Date) {
            self.first = first
            self.last = last
        }
    }

    /// Moves every accepted sample the person may not send to the refused ones: a type nobody asks for or the
    /// person has not enabled (`type: notAllowed`), or taken outside its window (`startsAt`/`endsAt: outsideWindow`).
    public func screen(_ batch: Sample.Batch, enabled: Set<SampleType>, moods: MoodSpan?) -> Sample.Batch {
        var screened = Sample.Batch(accepted: [], rejected: batch.rejected)
        for (index, sample) in batch.accepted {
            if let problem = refusal(of: sample, enabled: enabled, moods: moods) {
                screened.rejected.append(
                    (index, [FieldError(field: "samples[\(index)].\(problem.field)", code: problem.code)]))
            } else {
                screened.accepted.append((index, sample))
            }
        }
        screened.rejected.sort { $0.index < $1.index }
        return screened
    }

    /// Why the sample may not be kept, if it may not.
    public func refusal(of sample: Sample, enabled: Set<SampleType>, moods: MoodSpan?) -> (
        field: String, code: FieldError.Code
    )? {
        guard let asked = asked[sample.type], enabled.contains(sample.type) else { return ("type", .notAllowed) }
        guard let days = asked.windowDays else { return nil }
        guard let moods else { return ("startsAt", .outsideWindow) }
        if sample.start < moods.first.addingTimeInterval(-Double(days) * 86_400) { return ("startsAt", .outsideWindow) }
        if sample.end > moods.last { return ("endsAt", .outsideWindow) }
        return nil
    }
}
