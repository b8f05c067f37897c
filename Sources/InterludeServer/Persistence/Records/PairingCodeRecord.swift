import Fluent
import Foundation

/// A single-use 8-digit code a therapist hands a patient.
final class PairingCodeRecord: Model, @unchecked Sendable {
    static let schema = "pairing_codes"

    // managed
    @ID(key: .id) var id: UUID?
    @Field(key: "created_at") var createdAt: Date

    // references
    @Parent(key: "therapist_id") var therapist: UserRecord
    @Parent(key: "study_id") var study: StudyRecord
    @OptionalParent(key: "redeemed_by") var redeemedBy: UserRecord?

    // data
    @Field(key: "code") var code: String
    @OptionalField(key: "note") var note: String?
    @Field(key: "expires_at") var expiresAt: Date
    @OptionalField(key: "redeemed_at") var redeemedAt: Date?

    /// Listed here so Fluent need not find them by reflection on every row (PropertyListTests keeps it whole).
    var properties: [any AnyProperty] {
        [$id, $createdAt, $therapist, $study, $redeemedBy, $code, $note, $expiresAt, $redeemedAt]
    }

    init() {}

    init(therapistID: UUID, studyID: UUID, code: String, note: String?, expiresAt: Date, now: Date) {
        self.$therapist.id = therapistID
        self.$study.id = studyID
        self.code = code
        self.note = note
        self.expiresAt = expiresAt
        self.createdAt = now
    }
}
