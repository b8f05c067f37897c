import Fluent
import Foundation

/// A single-use secret sent by email: a verification or password reset link, or a therapist's invitation (then
/// the record's user is the therapist who invited, and the address the one invited).
final class EmailTokenRecord: Model, @unchecked Sendable {
    static let schema = "email_tokens"

    enum Purpose: String, Codable {
        case verification
        case passwordReset
        case invitation
    }

    // managed
    @ID(key: .id) var id: UUID?
    @Field(key: "created_at") var createdAt: Date

    // references
    @Parent(key: "user_id") var user: UserRecord

    // data
    @Field(key: "purpose") var purpose: Purpose
    @Field(key: "token_hash") var tokenHash: String
    @Field(key: "email") var email: String
    @Field(key: "expires_at") var expiresAt: Date
    @OptionalField(key: "used_at") var usedAt: Date?

    /// Listed here so Fluent need not find them by reflection on every row (PropertyListTests keeps it whole).
    var properties: [any AnyProperty] { [$id, $createdAt, $user, $purpose, $tokenHash, $email, $expiresAt, $usedAt] }

    init() {}

    init(userID: UUID, purpose: Purpose, tokenHash: String, email: String, expiresAt: Date, now: Date) {
        self.$user.id = userID
        self.purpose = purpose
        self.tokenHash = tokenHash
        self.email = email
        self.expiresAt = expiresAt
        self.createdAt = now
    }
}
