import Fluent
import Foundation

/// A signed-in session: an API bearer token or a console cookie, stored only as the SHA-256 of its secret.
package final class SessionRecord: Model, @unchecked Sendable {
    package static let schema = "sessions"

    package enum Kind: String, Codable {
        case api
        case console
    }

    // managed
    @ID(key: .id) package var id: UUID?
    @Field(key: "created_at") var createdAt: Date

    // references
    @Parent(key: "user_id") var user: UserRecord

    // data
    @Field(key: "kind") var kind: Kind
    @Field(key: "token_hash") var tokenHash: String
    @OptionalField(key: "csrf_token") var csrfToken: String?
    @Field(key: "expires_at") var expiresAt: Date
    @Field(key: "last_used_at") var lastUsedAt: Date

    /// Listed here so Fluent need not find them by reflection on every row (PropertyListTests keeps it whole).
    package var properties: [any AnyProperty] {
        [$id, $createdAt, $user, $kind, $tokenHash, $csrfToken, $expiresAt, $lastUsedAt]
    }

    package init() {}

    package init(userID: UUID, kind: Kind, tokenHash: String, csrfToken: String?, expiresAt: Date, now: Date) {
        self.$user.id = userID
        self.kind = kind
        self.tokenHash = tokenHash
        self.csrfToken = csrfToken
        self.expiresAt = expiresAt
        self.createdAt = now
        self.lastUsedAt = now
    }
}
