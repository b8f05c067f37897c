import Fluent
import Foundation

/// A change an app sent, under the id the app gave it, with what came of it: sending it again changes nothing
/// and gets the same answer.
final class SyncMutationRecord: Model, @unchecked Sendable {
    static let schema = "sync_mutations"

    @ID(custom: .id, generatedBy: .user) var id: UUID?
    @Field(key: "created_at") var createdAt: Date
    @Parent(key: "user_id") var user: UserRecord
    /// The result as JSON, returned again for a repeat.
    @Field(key: "result") var result: String

    /// Listed here so Fluent need not find them by reflection on every row (PropertyListTests keeps it whole).
    var properties: [any AnyProperty] { [$id, $createdAt, $user, $result] }

    init() {}

    init(id: UUID, userID: UUID, result: String, now: Date) {
        self.id = id
        self.$user.id = userID
        self.result = result
        self.createdAt = now
    }
}
