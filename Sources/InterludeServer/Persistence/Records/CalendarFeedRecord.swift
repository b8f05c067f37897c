import Fluent
import Foundation

/// A patient's private calendar subscription: looked up by the hash of its secret; the secret itself is kept
/// encrypted so the app can show the address again.
final class CalendarFeedRecord: Model, @unchecked Sendable {
    static let schema = "calendar_feeds"

    // managed
    @ID(key: .id) var id: UUID?
    @Field(key: "created_at") var createdAt: Date

    // references
    @Parent(key: "patient_id") var patient: UserRecord

    // data
    @Field(key: "token_hash") var tokenHash: String
    @Field(key: "sealed_token") var sealedToken: String

    /// Listed here so Fluent need not find them by reflection on every row (PropertyListTests keeps it whole).
    var properties: [any AnyProperty] { [$id, $createdAt, $patient, $tokenHash, $sealedToken] }

    init() {}

    init(patientID: UUID, tokenHash: String, sealedToken: String, now: Date) {
        self.$patient.id = patientID
        self.tokenHash = tokenHash
        self.sealedToken = sealedToken
        self.createdAt = now
    }
}
