import Foundation

/// Something that happened to the person and matters for their health: an appointment, a phase of mental illness,
/// a tinnitus attack, or another kind a study names.
public struct HealthEvent: Codable, Sendable, Equatable {
    public enum BuiltInType: String, Sendable, Codable, CaseIterable {
        case appointment
        case mentalIllness
        case tinnitusAttack
        case other
    }

    public static let titleMaxLength = 200
    public static let descriptionMaxLength = 5000
    public static let typeMaxLength = 60

    public var title: String
    /// The moment, entered in the person's zone.
    public var occurredAt: Date
    /// A built-in type's name or one a study added.
    public var type: String
    public var description: String?

    public init(title: String, occurredAt: Date, type: String, description: String?) {
        self.title = title
        self.occurredAt = occurredAt
        self.type = type
        self.description = description
    }

    /// Checks an event as entered; `studyTypes` are the types the person's studies add to the built-in ones.
    public static func validate(
        title: String?, occurredAt: Date?, type: String?, description: String?, studyTypes: Set<String> = []
    ) throws(ValidationFailure) -> HealthEvent {
        var validator = FieldValidator()
        let cleanTitle = validator.text(title, field: "title", maxLength: titleMaxLength)
        if occurredAt == nil { validator.add("occurredAt", .required) }
        let cleanType = validator.text(type, field: "type", maxLength: typeMaxLength)
        if let cleanType, BuiltInType(rawValue: cleanType) == nil, !studyTypes.contains(cleanType) {
            validator.add("type", .notAnOption)
        }
        let cleanDescription = validator.text(
            description, field: "description", required: false, maxLength: descriptionMaxLength, lines: .multiple)
        try validator.check()
        return HealthEvent(title: cleanTitle!, occurredAt: occurredAt!, type: cleanType!, description: cleanDescription)
    }

    /// Whether the event matches a search: every word of `query` in its title, description or type.
    public func matches(_ query: String) -> Bool {
        let haystack = [title, description ?? "", type].joined(separator: " ").lowercased()
        return query.lowercased().split(whereSeparator: \.isWhitespace).allSatisfy { haystack.contains($0) }
    }
}
