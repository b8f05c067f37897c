import Foundation

/// Which records a study or practice collects, and the event types it adds to the built-in ones. Nothing is
/// collected until the study says so.
public struct RecordSettings: Sendable, Equatable {
    public static let eventTypesMaxCount = 20

    public var collects: Set<RecordKind>
    public var eventTypes: [String]

    public init(collects: Set<RecordKind> = [], eventTypes: [String] = []) {
        self.collects = collects
        self.eventTypes = eventTypes
    }

    /// Checks settings as entered: known kinds, and event types that are single lines, distinct, no built-in type
    /// again, at most twenty.
    public static func validate(collects: [String], eventTypes: [String]) throws(ValidationFailure) -> RecordSettings {
        var validator = FieldValidator()
        let kinds = collects.map(RecordKind.init(rawValue:))
        if kinds.contains(nil) { validator.add("collects", .notAnOption) }
        var types: [String] = []
        for (index, raw) in eventTypes.enumerated() {
            guard let type = validator.text(raw, field: "eventTypes[\(index)]", maxLength: HealthEvent.typeMaxLength) else { continue }
            if types.contains(type) || HealthEvent.BuiltInType(rawValue: type) != nil {
                validator.add("eventTypes[\(index)]", .duplicate)
            } else {
                types.append(type)
            }
        }
        if eventTypes.count > eventTypesMaxCount { validator.add("eventTypes", .tooLong, limit: eventTypesMaxCount) }
        try validator.check()
        return RecordSettings(collects: Set(kinds.compactMap { $0 }), eventTypes: types)
    }

    /// What several studies collect together, for a person in all of them.
    public static func union(_ settings: [RecordSettings]) -> RecordSettings {
        RecordSettings(
            collects: settings.reduce(into: []) { $0.formUnion($1.collects) },
            eventTypes: settings.flatMap(\.eventTypes).reduce(into: []) { if !$0.contains($1) { $0.append($1) } })
    }

    /// The kinds in the order they are listed everywhere.
    public var orderedKinds: [RecordKind] { RecordKind.allCases.filter(collects.contains) }
}
