import Foundation
import InterludeCore

/// A rule as the console's form sends it: every field a string, up to three clauses written out. Turns into a
/// `StudyRule` for `StudyRule.validate`, with problems named by the form field they belong to.
struct RuleForm: Codable, Sendable, Equatable {
    static let clauseRows = 3

    var name = ""
    var trigger = "submitted"
    var instrumentKey = ""
    var mode = RuleCondition.Mode.all.rawValue
    var subject0 = "", id0 = "", operator0 = "", value0 = ""
    var subject1 = "", id1 = "", operator1 = "", value1 = ""
    var subject2 = "", id2 = "", operator2 = "", value2 = ""
    var count = ""
    var missedInstrument = ""
    var action = "alert"
    var interventionKind = InterventionKind.commendation.rawValue
    var text = ""
    var priority = AlertPriority.normal.rawValue
    var message = ""
    var promptInstrument = ""
    var openHours = "24"

    init() {}

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        func text(_ key: CodingKeys, _ fallback: String = "") throws -> String {
            try container.decodeIfPresent(String.self, forKey: key) ?? fallback
        }
        name = try text(.name)
        trigger = try text(.trigger, "submitted")
        instrumentKey = try text(.instrumentKey)
        mode = try text(.mode, RuleCondition.Mode.all.rawValue)
        subject0 = try text(.subject0)
        id0 = try text(.id0)
        operator0 = try text(.operator0)
        value0 = try text(.value0)
        subject1 = try text(.subject1)
        id1 = try text(.id1)
        operator1 = try text(.operator1)
        value1 = try text(.value1)
        subject2 = try text(.subject2)
        id2 = try text(.id2)
        operator2 = try text(.operator2)
        value2 = try text(.value2)
        count = try text(.count)
        missedInstrument = try text(.missedInstrument)
        action = try text(.action, "alert")
        interventionKind = try text(.interventionKind, InterventionKind.commendation.rawValue)
        self.text = try text(.text)
        priority = try text(.priority, AlertPriority.normal.rawValue)
        message = try text(.message)
        promptInstrument = try text(.promptInstrument)
        openHours = try text(.openHours, "24")
    }

    private var rows: [(subject: String, id: String, operator: String, value: String)] {
        [(subject0, id0, operator0, value0), (subject1, id1, operator1, value1), (subject2, id2, operator2, value2)]
    }

    /// The rule the form describes; a row without a subject is left out. A band row's value is the band level.
    func rule() throws(ValidationFailure) -> StudyRule {
        var validator = FieldValidator()
        var clauses: [RuleClause] = []
        for (index, row) in rows.enumerated() where !row.subject.isEmpty {
            guard let subject = RuleClause.Subject(rawValue: row.subject) else {
                validator.add("subject\(index)", .notAllowed)
                continue
            }
            guard let comparison = RuleClause.Operator(rawValue: row.operator) else {
                validator.add("operator\(index)", .notAllowed)
                continue
            }
            let id = row.id.trimmingCharacters(in: .whitespaces)
            let value = row.value.trimmingCharacters(in: .whitespaces)
            if subject == .band {
                clauses.append(
                    RuleClause(subject: subject, id: id, operator: comparison, level: value.isEmpty ? nil : value))
            } else if let number = Double(value.replacingOccurrences(of: ",", with: ".")) {
                clauses.append(RuleClause(subject: subject, id: id, operator: comparison, value: number))
            } else {
                validator.add("value\(index)", value.isEmpty ? .required : .invalidFormat)
            }
        }
        let triggerValue: RuleTrigger
        switch trigger {
        case "missedInARow":
            guard let number = Int(count.trimmingCharacters(in: .whitespaces)) else {
                validator.add("count", count.isEmpty ? .required : .invalidFormat)
                throw ValidationFailure(validator.errors)
            }
            triggerValue = .missedInARow(
                count: number, instrumentKey: missedInstrument.isEmpty ? nil : missedInstrument)
        default:
            triggerValue = .submitted(
                instrumentKey: instrumentKey,
                condition: RuleCondition(mode: RuleCondition.Mode(rawValue: mode) ?? .all, clauses: clauses))
        }
        let actionValue: RuleAction
        switch action {
        case "intervention":
            actionValue = .intervention(
                InterventionDraft(kind: InterventionKind(rawValue: interventionKind) ?? .message, text: text))
        case "prompt":
            guard let hours = Int(openHours.trimmingCharacters(in: .whitespaces)) else {
                validator.add("openHours", .invalidFormat)
                throw ValidationFailure(validator.errors)
            }
            actionValue = .prompt(instrumentKey: promptInstrument, openHours: hours)
        default:
            actionValue = .alert(priority: AlertPriority(rawValue: priority) ?? .normal, message: message)
        }
        try validator.check()
        return StudyRule(name: name, trigger: triggerValue, action: actionValue)
    }

    /// The form field a problem `StudyRule.validate` found belongs to.
    static func formField(for field: String) -> String {
        let mapping = [
            "trigger.instrumentKey": "instrumentKey", "trigger.count": "count", "action.kind": "interventionKind",
            "action.text": "text", "action.message": "message", "action.instrumentKey": "promptInstrument",
            "action.openHours": "openHours",
        ]
        if let mapped = mapping[field] { return mapped }
        let parts = field.split(separator: ".")
        if parts.count == 5, parts[0] == "trigger", parts[2] == "clauses" {
            let row = parts[3]
            switch parts[4] {
            case "level", "value": return "value\(row)"
            case "operator": return "operator\(row)"
            default: return "id\(row)"
            }
        }
        return field
    }
}
