import Fluent
import Foundation

/// A study's rule (a `StudyRule` as JSON).
final class RuleRecord: Model, @unchecked Sendable {
    static let schema = "study_rules"

    @ID(key: .id) var id: UUID?
    @Field(key: "created_at") var createdAt: Date
    @Parent(key: "study_id") var study: StudyRecord
    @OptionalParent(key: "created_by") var createdBy: UserRecord?
    @Field(key: "definition") var definition: String

    init() {}

    init(studyID: UUID, createdBy: UUID?, definition: String, now: Date) {
        self.$study.id = studyID
        self.$createdBy.id = createdBy
        self.definition = definition
        self.createdAt = now
    }
}

/// Every time a rule fired: for whom, why, and what it did. The dedupe key makes each firing happen once.
final class RuleFiringRecord: Model, @unchecked Sendable {
    static let schema = "rule_firings"

    @ID(key: .id) var id: UUID?
    @Field(key: "created_at") var createdAt: Date
    /// Nil for the built-in rules.
    @OptionalField(key: "rule_id") var ruleID: UUID?
    @Field(key: "rule_name") var ruleName: String
    @OptionalField(key: "study_id") var studyID: UUID?
    @Parent(key: "patient_id") var patient: UserRecord
    @OptionalField(key: "response_id") var responseID: UUID?
    @Field(key: "dedupe_key") var dedupeKey: String
    @Field(key: "reason") var reason: String
    /// What the rule did, e.g. `alert`, `intervention`, `prompt`, or why it could not.
    @Field(key: "outcome") var outcome: String

    init() {}
}

/// An alert for a therapist, to be acknowledged with a note; unacknowledged high ones escalate.
final class AlertRecord: Model, @unchecked Sendable {
    static let schema = "alerts"

    @ID(key: .id) var id: UUID?
    @Field(key: "created_at") var createdAt: Date
    @Parent(key: "patient_id") var patient: UserRecord
    @OptionalField(key: "study_id") var studyID: UUID?
    /// The therapist (or study owner) it is for.
    @Parent(key: "recipient_id") var recipient: UserRecord
    @Field(key: "priority") var priority: String
    @Field(key: "reason") var reason: String
    @OptionalField(key: "firing_id") var firingID: UUID?
    @OptionalField(key: "acknowledged_at") var acknowledgedAt: Date?
    @OptionalParent(key: "acknowledged_by") var acknowledgedBy: UserRecord?
    /// Encrypted: the note may describe the patient.
    @OptionalField(key: "note") var note: String?
    @OptionalField(key: "escalated_at") var escalatedAt: Date?
    @OptionalParent(key: "escalated_to") var escalatedTo: UserRecord?

    init() {}
}
