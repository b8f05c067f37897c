import Fluent
import Foundation

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
    /// Sealed by `FieldCipher`: it names items and scores.
    @Field(key: "reason") var reason: String
    /// What the rule did, e.g. `alert`, `intervention`, `prompt`, or why it could not.
    @Field(key: "outcome") var outcome: String

    /// Listed here so Fluent need not find them by reflection on every row (PropertyListTests keeps it whole).
    var properties: [any AnyProperty] {
        [$id, $createdAt, $ruleID, $ruleName, $studyID, $patient, $responseID, $dedupeKey, $reason, $outcome]
    }

    init() {}
}
