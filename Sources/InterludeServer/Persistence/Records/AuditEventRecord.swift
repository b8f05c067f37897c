import Fluent
import Foundation
import InterludeCore

/// One staff read or change of a patient's data. Rows are only ever added; erasing a patient re-points
/// `subject_id` to the erasure tombstone so the record of who looked stays without naming the person.
final class AuditEventRecord: Model, @unchecked Sendable {
    static let schema = "audit_events"

    // managed
    @ID(key: .id) var id: UUID?
    @Field(key: "occurred_at") var occurredAt: Date

    // data
    @Field(key: "actor_id") var actorID: UUID
    @Field(key: "actor_role") var actorRole: Role
    @Field(key: "action") var action: String
    @OptionalField(key: "subject_id") var subjectID: UUID?
    @OptionalField(key: "target") var target: String?

    /// Listed here so Fluent need not find them by reflection on every row (PropertyListTests keeps it whole).
    var properties: [any AnyProperty] { [$id, $occurredAt, $actorID, $actorRole, $action, $subjectID, $target] }

    init() {}

    init(actorID: UUID, actorRole: Role, action: String, subjectID: UUID?, target: String?, occurredAt: Date) {
        self.actorID = actorID
        self.actorRole = actorRole
        self.action = action
        self.subjectID = subjectID
        self.target = target
        self.occurredAt = occurredAt
    }
}
