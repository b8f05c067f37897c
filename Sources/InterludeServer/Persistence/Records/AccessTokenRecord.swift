import Fluent
import Foundation
import InterludeCore

/// A staff member's personal access token for scripts: a name, a scope on chosen studies, an expiry. Only the
/// secret's hash is kept.
final class AccessTokenRecord: Model, @unchecked Sendable {
    static let schema = "access_tokens"

    // managed
    @ID(key: .id) var id: UUID?
    @Field(key: "created_at") var createdAt: Date

    // references
    @Parent(key: "user_id") var user: UserRecord

    // data
    @Field(key: "name") var name: String
    @Field(key: "scope") var scope: AccessTokenScope
    /// The studies it reaches, as a JSON array of ids.
    @Field(key: "study_ids") var studyIDs: String
    @Field(key: "token_hash") var tokenHash: String
    @Field(key: "expires_at") var expiresAt: Date
    @OptionalField(key: "last_used_at") var lastUsedAt: Date?

    /// Listed here so Fluent need not find them by reflection on every row (PropertyListTests keeps it whole).
    var properties: [any AnyProperty] {
        [$id, $createdAt, $user, $name, $scope, $studyIDs, $tokenHash, $expiresAt, $lastUsedAt]
    }

    init() {}

    init(
        userID: UUID, name: String, scope: AccessTokenScope, studyIDs: [UUID], tokenHash: String, expiresAt: Date,
        now: Date
    ) throws {
        self.$user.id = userID
        self.name = name
        self.scope = scope
        self.studyIDs = String(decoding: try JSONEncoder().encode(studyIDs), as: UTF8.self)
        self.tokenHash = tokenHash
        self.expiresAt = expiresAt
        self.createdAt = now
    }

    var studies: [UUID] {
        (try? JSONDecoder().decode([UUID].self, from: Data(studyIDs.utf8))) ?? []
    }
}
