import Foundation

/// Which records a study or practice collects, and the event types it adds to the built-in ones. Nothing is
/// collected until the study says so.
public struct RecordSettings: Sendable, Equatable {
    public static let eventTypesMaxCount = 20

    public var collects: Set<RecordKind>
    /// Each type by the name events are kept under (English, or the one language it was written in).
    public var eventTypes: [String]
    /// A type's names per language, where it has more than the one it is kept under.
    public var eventTypeNames: [String: LocalizedText]
    /// The phone and watch samples asked for, and the window they are kept in.
    public var samples: SampleSettings

    public init(
        collects: Set<RecordKind> = [], eventTypes: [String] = [], eventTypeNames: [String: LocalizedText] = [:],
        samples: SampleSettings = SampleSettings()
    ) {
        self.collects = collects
        self.eventTypes = eventTypes
        self.eventTypeNames = eventTypeNames
        self.samples = samples
    }

    /// Checks settings as entered: known kinds, and event types that are single lines, distinct, no built-in type
    /// again, at most twenty, each with its German name where given (`eventTypeNames`, keyed by the type); sample
    /// types as `SampleSettings` checks them.
    public static func validate(
        collects: [String], eventTypes: [String], eventTypeNames: [String: String] = [:],
        sampleTypes: [(type: String?, purpose: [Language: String?])] = [], windowDays: Int? = nil
    ) throws(ValidationFailure) -> RecordSettings {
        var validator = FieldValidator()
        var samples = SampleSettings()
        do {
            samples = try SampleSettings.validate(requests: sampleTypes, windowDays: windowDays)
        } catch {
            for problem in error.errors { validator.add(problem.field, problem.code, limit: problem.limit) }
        }
        let kinds = collects.map { RecordKind(rawValue: $0).flatMap { RecordKind.collectable.contains($0) ? $0 : nil } }
        if kinds.contains(nil) { validator.add("collects", .notAnOption) }
        var types: [String] = []
        for (index, raw) in eventTypes.enumerated() {
            guard let type = validator.text(raw, field: "eventTypes[\(index)]", maxLength: HealthEvent.typeMaxLength)
            else { continue }
            if types.contains(type) || HealthEvent.BuiltInType(rawValue: type) != nil {
                validator.add("eventTypes[\(index)]", .duplicate)
            } else {
                types.append(type)
            }
        }
        if eventTypes.count > eventTypesMaxCount { validator.add("eventTypes", .tooLong, limit: eventTypesMaxCount) }
        var names: [String: LocalizedText] = [:]
        for (type, german) in eventTypeNames.sorted(by: { $0.key < $1.key }) {
            let field = "eventTypeNames.\(type)"
            let trimmed = type.trimmingCharacters(in: .whitespaces)
            guard types.contains(trimmed) else {
                validator.add(field, .notAnOption)
                continue
            }
            if let name = validator.text(german, field: field, required: false, maxLength: HealthEvent.typeMaxLength) {
                names[trimmed] = LocalizedText([.fallback: trimmed, .de: name])
            }
        }
        try validator.check()
        return RecordSettings(
            collects: Set(kinds.compactMap { $0 }), eventTypes: types, eventTypeNames: names, samples: samples)
    }

    /// What several studies collect together, for a person in all of them: the sample types any of them asks for,
    /// with every study's reason (the windows per type are `SampleCollection`'s).
    public static func union(_ settings: [RecordSettings]) -> RecordSettings {
        let samples = SampleCollection.union(settings.map(\.samples))
        return RecordSettings(
            collects: settings.reduce(into: []) { $0.formUnion($1.collects) },
            eventTypes: settings.flatMap(\.eventTypes).reduce(into: []) { if !$0.contains($1) { $0.append($1) } },
            eventTypeNames: settings.reduce(into: [:]) { $0.merge($1.eventTypeNames) { first, _ in first } },
            samples: SampleSettings(
                requests: samples.types.map { type in
                    SampleSettings.Request(
                        type: type, purpose: .joined(samples.asked[type]?.purposes ?? [], separator: "\n\n"))
                }))
    }

    /// The kinds chosen, in the order they are listed everywhere.
    public var orderedKinds: [RecordKind] { RecordKind.collectable.filter(collects.contains) }

    /// Every kind of record kept for what was chosen: occurrences with thoughts.
    public var keptKinds: [RecordKind] { RecordKind.allCases.filter { collects.contains($0.collectedWith) } }
}
