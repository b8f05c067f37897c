import Fluent
import Foundation

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
    @Field(key: "origin") var origin: String
    @Field(key: "kind") var kind: String
    @Field(key: "text") var text: String
    /// When the patient receives it; in the future for messages planned ahead.
    @Field(key: "deliver_at") var deliverAt: Date
    @OptionalField(key: "seen_at") var seenAt: Date?
    @OptionalField(key: "completed_at") var completedAt: Date?
    /// For planned messages: which day and minute of which plan, so planning twice adds nothing.
    @OptionalField(key: "occurrence") var occurrence: String?

    init() {}

    init(
        id: UUID = UUID(), patientID: UUID, studyID: UUID?, senderID: UUID?, origin: String, kind: String,
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

/// A ready-made intervention text of a study, for therapists to send with one click.
final class InterventionTemplateRecord: Model, @unchecked Sendable {
    static let schema = "intervention_templates"

    @ID(key: .id) var id: UUID?
    @Field(key: "created_at") var createdAt: Date
    @Parent(key: "study_id") var study: StudyRecord
    @Field(key: "kind") var kind: String
    @Field(key: "text") var text: String

    init() {}

    init(studyID: UUID, kind: String, text: String, now: Date) {
        self.$study.id = studyID
        self.kind = kind
        self.text = text
        self.createdAt = now
    }
}

/// One message of a study's pool of reinforcement messages.
final class StudyMessageRecord: Model, @unchecked Sendable {
    static let schema = "study_messages"

    @ID(key: .id) var id: UUID?
    @Field(key: "created_at") var createdAt: Date
    @Parent(key: "study_id") var study: StudyRecord
    @Field(key: "text") var text: String

    init() {}

    init(studyID: UUID, text: String, now: Date) {
        self.$study.id = studyID
        self.text = text
        self.createdAt = now
    }
}

/// A study's message plan (a `MessagePlan` as JSON); at most one per study.
final class MessagePlanRecord: Model, @unchecked Sendable {
    static let schema = "message_plans"

    @ID(key: .id) var id: UUID?
    @Field(key: "created_at") var createdAt: Date
    @Parent(key: "study_id") var study: StudyRecord
    @Field(key: "definition") var definition: String

    init() {}

    init(studyID: UUID, definition: String, now: Date) {
        self.$study.id = studyID
        self.definition = definition
        self.createdAt = now
    }
}

/// The ciphertext of a patient's intervention answers, encrypted on their device with a key only they know.
final class InterventionBackupRecord: Model, @unchecked Sendable {
    static let schema = "intervention_backups"

    @ID(key: .id) var id: UUID?
    @Field(key: "updated_at") var updatedAt: Date
    @Parent(key: "user_id") var user: UserRecord
    /// Counts every replacement, so a device does not overwrite a newer backup unknowingly.
    @Field(key: "version") var version: Int
    /// The envelope as the device sent it: algorithm parameters, salt, nonce and ciphertext, all opaque here.
    @Field(key: "envelope") var envelope: String

    init() {}
}
