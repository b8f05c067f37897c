import Fluent
import Foundation
import InterludeCore

/// A record a patient keeps in their health record (an event, a therapy, an audiogram, a thought): its content sealed as JSON,
/// and a version that moves on with every edit so two devices cannot overwrite each other unseen. The id is the
/// one the client generated, so a create sent twice finds the first.
final class EntryRecord: Model, @unchecked Sendable {
    static let schema = "records"

    // managed
    @ID(custom: .id, generatedBy: .user) var id: UUID?
    @Field(key: "created_at") var createdAt: Date
    @Field(key: "updated_at") var updatedAt: Date

    // references
    @Parent(key: "patient_id") var patient: UserRecord

    // data
    @Field(key: "kind") var kind: RecordKind
    @Field(key: "version") var version: Int
    /// When it happened or began, for ordering and time axes.
    @Field(key: "occurred_at") var occurredAt: Date
    /// The content (`HealthEvent`, `Therapy`, `Audiogram`) as JSON, sealed by `FieldCipher`.
    @Field(key: "content") var content: String
    /// When the person is to be reminded of it (a therapy's end), if ever.
    @OptionalField(key: "remind_at") var remindAt: Date?
    /// A thought's words as compared, hashed with a key of the server's (`FieldCipher.matchKey`); empty otherwise.
    @OptionalField(key: "match_key") var matchKey: String?

    /// Listed here so Fluent need not find them by reflection on every row (PropertyListTests keeps it whole).
    var properties: [any AnyProperty] {
        [$id, $createdAt, $updatedAt, $patient, $kind, $version, $occurredAt, $content, $remindAt, $matchKey]
    }

    init() {}

    init(id: UUID, patientID: UUID, kind: RecordKind, occurredAt: Date, content: String, now: Date) {
        self.id = id
        self.$patient.id = patientID
        self.kind = kind
        self.version = 1
        self.occurredAt = occurredAt
        self.content = content
        self.createdAt = now
        self.updatedAt = now
    }
}
