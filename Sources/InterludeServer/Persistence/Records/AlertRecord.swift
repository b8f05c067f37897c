import Fluent
import Foundation
import InterludeCore

/// An alert for a therapist, to be acknowledged with a note; unacknowledged high ones escalate.
final class AlertRecord: Model, @unchecked Sendable {
    static let schema = "alerts"

    @ID(key: .id) var id: UUID?
    @Field(key: "created_at") var createdAt: Date
    @Parent(key: "patient_id") var patient: UserRecord
    @OptionalField(key: "study_id") var studyID: UUID?
    /// The therapist (or study owner) it is for.
    @Parent(key: "recipient_id") var recipient: UserRecord
    @Field(key: "priority") var priority: AlertPriority
    /// Sealed by `FieldCipher`: it names items and scores.
    @Field(key: "reason") var reason: String
    @OptionalField(key: "firing_id") var firingID: UUID?
    @OptionalField(key: "acknowledged_at") var acknowledgedAt: Date?
    @OptionalParent(key: "acknowledged_by") var acknowledgedBy: UserRecord?
    /// Encrypted: the note may describe the patient.
    @OptionalField(key: "note") var note: String?
    @OptionalField(key: "escalated_at") var escalatedAt: Date?
    @OptionalParent(key: "escalated_to") var escalatedTo: UserRecord?

    /// Listed here so Fluent need not find them by reflection on every row (PropertyListTests keeps it whole).
    var properties: [any AnyProperty] {
        [
            $id, $createdAt, $patient, $studyID, $recipient, $priority, $reason, $firingID, $acknowledgedAt,
            $acknowledgedBy, $note, $escalatedAt, $escalatedTo,
        ]
    }

    init() {}
}
