import Fluent
import Foundation

/// Something a person's apps had and must now forget: a prompt the plans took back, a deleted appointment.
final class SyncTombstoneRecord: Model, @unchecked Sendable {
    static let schema = "sync_tombstones"

    @ID(key: .id) var id: UUID?
    @Parent(key: "user_id") var user: UserRecord
    @Field(key: "entity") var entity: String
    @Field(key: "entity_id") var entityID: UUID
    @Field(key: "deleted_at") var deletedAt: Date

    init() {}

    init(userID: UUID, entity: String, entityID: UUID, deletedAt: Date) {
        self.$user.id = userID
        self.entity = entity
        self.entityID = entityID
        self.deletedAt = deletedAt
    }
}

/// A change an app sent, under the id the app gave it, with what came of it: sending it again changes nothing
/// and gets the same answer.
final class SyncMutationRecord: Model, @unchecked Sendable {
    static let schema = "sync_mutations"

    @ID(custom: .id, generatedBy: .user) var id: UUID?
    @Field(key: "created_at") var createdAt: Date
    @Parent(key: "user_id") var user: UserRecord
    /// The result as JSON, returned again for a repeat.
    @Field(key: "result") var result: String

    init() {}

    init(id: UUID, userID: UUID, result: String, now: Date) {
        self.id = id
        self.$user.id = userID
        self.result = result
        self.createdAt = now
    }
}
