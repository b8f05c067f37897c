import Fluent
import Foundation
import InterludeCore

/// One intervention sent to a patient: its text (encrypted) and the moments it was sent, seen and completed.
/// Answers to questions never reach the server.
final class InterventionRecord: Model, @unchecked Sendable {
    static let schema = "interventions"

    // managed
    @ID(key: .id) var id: UUID?
    @Field(key: "created_at") var createdAt: Date
    /// Last change, for apps that sync.
    @Field(key: "changed_at") var changedAt: Date

    // references
    @Parent(key: "patient_id") var patient: UserRecord
    @OptionalParent(key: "study_id") var study: StudyRecord?
    @OptionalParent(key: "sender_id") var sender: UserRecord?
    @OptionalField(key: "rule_id") var ruleID: UUID?

    // data
    @Field(key: "origin") var origin: InterventionOrigin
    @Field(key: "kind") var kind: InterventionKind
    @Field(key: "text") var text: String
    /// When the patient receives it; in the future for messages planned ahead.
    @Field(key: "deliver_at") var deliverAt: Date
    @OptionalField(key: "seen_at") var seenAt: Date?
    @OptionalField(key: "completed_at") var completedAt: Date?
    /// For planned messages: which day and minute of which plan, so planning twice adds nothing.
    @OptionalField(key: "occurrence") var occurrence: String?

    /// Listed here so Fluent need not find them by reflection on every row (PropertyListTests keeps it whole).
    var properties: [any AnyProperty] {
        [
            $id, $createdAt, $changedAt, $patient, $study, $sender, $ruleID, $origin, $kind, $text, $deliverAt, $seenAt,
            $completedAt, $occurrence,
        ]
    }

    init() {}

    init(
        id: UUID = UUID(), patientID: UUID, studyID: UUID?, senderID: UUID?, origin: InterventionOrigin,
        kind: InterventionKind,
        sealedText: String, deliverAt: Date, now: Date
    ) {
        self.id = id
        self.$patient.id = patientID
        self.$study.id = studyID
        self.$sender.id = senderID
        self.origin = origin
        self.kind = kind
        self.text = sealedText
        self.deliverAt = deliverAt
        self.createdAt = now
        self.changedAt = now
    }
}
