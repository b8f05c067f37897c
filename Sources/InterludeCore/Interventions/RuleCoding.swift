import Foundation

extension RuleTrigger: Codable {
    enum CodingKeys: String, CodingKey { case kind, instrumentKey, condition, count }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        switch try container.decode(String.self, forKey: .kind) {
        case "submitted":
            self = .submitted(
                instrumentKey: try container.decode(String.self, forKey: .instrumentKey),
                condition: try container.decodeIfPresent(RuleCondition.self, forKey: .condition)
                    ?? RuleCondition(mode: .all, clauses: []))
        case "missedInARow":
            self = .missedInARow(
                count: try container.decode(Int.self, forKey: .count),
                instrumentKey: try container.decodeIfPresent(String.self, forKey: .instrumentKey))
        case let kind:
            throw DecodingError.dataCorruptedError(
                forKey: .kind, in: container, debugDescription: "Unknown kind \(kind)")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .submitted(let instrumentKey, let condition):
            try container.encode("submitted", forKey: .kind)
            try container.encode(instrumentKey, forKey: .instrumentKey)
            try container.encode(condition, forKey: .condition)
        case .missedInARow(let count, let instrumentKey):
            try container.encode("missedInARow", forKey: .kind)
            try container.encode(count, forKey: .count)
            try container.encodeIfPresent(instrumentKey, forKey: .instrumentKey)
        }
    }
}

extension RuleAction: Codable {
    enum CodingKeys: String, CodingKey {
        case kind, interventionKind, text, priority, message, instrumentKey, openHours
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        switch try container.decode(String.self, forKey: .kind) {
        case "intervention":
            self = .intervention(
                InterventionDraft(
                    kind: try container.decode(InterventionKind.self, forKey: .interventionKind),
                    text: try container.decode(String.self, forKey: .text)))
        case "alert":
            self = .alert(
                priority: try container.decodeIfPresent(AlertPriority.self, forKey: .priority) ?? .normal,
                message: try container.decode(String.self, forKey: .message))
        case "prompt":
            self = .prompt(
                instrumentKey: try container.decode(String.self, forKey: .instrumentKey),
                openHours: try container.decodeIfPresent(Int.self, forKey: .openHours) ?? 24)
        case let kind:
            throw DecodingError.dataCorruptedError(
                forKey: .kind, in: container, debugDescription: "Unknown kind \(kind)")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(kind, forKey: .kind)
        switch self {
        case .intervention(let draft):
            try container.encode(draft.kind, forKey: .interventionKind)
            try container.encode(draft.text, forKey: .text)
        case .alert(let priority, let message):
            try container.encode(priority, forKey: .priority)
            try container.encode(message, forKey: .message)
        case .prompt(let instrumentKey, let openHours):
            try container.encode(instrumentKey, forKey: .instrumentKey)
            try container.encode(openHours, forKey: .openHours)
        }
    }
}

extension StudyRule {
    /// Checks a rule against the instruments it names; returns it with its texts trimmed. Field names follow the
    /// JSON (`trigger.condition.clauses.0.id`).
    public static func validate(_ rule: StudyRule, instruments: [String: InstrumentDefinition])
        throws(ValidationFailure)
        -> StudyRule
    {
        var validator = FieldValidator()
        var checked = rule
        checked.name = validator.text(rule.name, field: "name", maxLength: nameMaxLength) ?? rule.name
        switch rule.trigger {
        case .submitted(let instrumentKey, let condition):
            if let definition = instruments[instrumentKey] {
                for (index, clause) in condition.clauses.enumerated() {
                    check(clause, against: definition, field: "trigger.condition.clauses.\(index)", into: &validator)
                }
            } else {
                validator.add("trigger.instrumentKey", .unknown)
            }
        case .missedInARow(let count, let instrumentKey):
            if count < 1 || count > mostMissedInARow {
                validator.add("trigger.count", .outOfRange, limit: mostMissedInARow)
            }
            if let instrumentKey, instruments[instrumentKey] == nil { validator.add("trigger.instrumentKey", .unknown) }
        }
        switch rule.action {
        case .intervention(let draft):
            do {
                checked.action = .intervention(
                    try InterventionDraft.validate(kind: draft.kind, text: draft.text, fieldPrefix: "action."))
            } catch {
                for problem in error.errors { validator.add(problem.field, problem.code, limit: problem.limit) }
            }
        case .alert(let priority, let message):
            if let text = validator.text(
                message, field: "action.message", maxLength: InterventionDraft.textMaxLength, lines: .multiple)
            {
                checked.action = .alert(priority: priority, message: text)
            }
        case .prompt(let instrumentKey, let openHours):
            if instruments[instrumentKey] == nil { validator.add("action.instrumentKey", .unknown) }
            if openHours < 1 || openHours > mostPromptHours {
                validator.add("action.openHours", .outOfRange, limit: mostPromptHours)
            }
        }
        try validator.check()
        return checked
    }

    private static func check(
        _ clause: RuleClause, against definition: InstrumentDefinition, field: String,
        into validator: inout FieldValidator
    ) {
        validator.number(clause.value, field: field + ".value")
        switch clause.subject {
        case .item:
            if definition.item(clause.id) == nil { validator.add(field + ".id", .unknown) }
            if clause.value == nil { validator.add(field + ".value", .required) }
        case .score:
            if !definition.scores.contains(where: { $0.id == clause.id }) { validator.add(field + ".id", .unknown) }
            if clause.value == nil { validator.add(field + ".value", .required) }
        case .band:
            guard let score = definition.scores.first(where: { $0.id == clause.id }) else {
                validator.add(field + ".id", .unknown)
                return
            }
            if ![.equals, .notEquals].contains(clause.operator) { validator.add(field + ".operator", .notAllowed) }
            guard let level = clause.level else {
                validator.add(field + ".level", .required)
                return
            }
            if !score.bands.contains(where: { $0.level == level }) { validator.add(field + ".level", .unknown) }
        }
    }
}
