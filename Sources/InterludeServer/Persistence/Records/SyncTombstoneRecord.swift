import Fluent
import Foundation

/// Something a person's apps had and must now forget: a prompt the plans took back, a deleted appointment.
final class SyncTombstoneRecord: Model, @unchecked Sendable {
    static let schema = "sync_tombstones"

    @ID(key: .id) var id: UUID?
    @Parent(key: "user_id") var user: UserRecord
    @Field(key: "entity") var entity: SyncEntity
    @Field(key: "entity_id") var entityID: UUID
    @Field(key: "deleted_at") var deletedAt: Date

    /// Listed here so Fluent need not find them by reflection on every row (PropertyListTests keeps it whole).
    var properties: [any AnyProperty] { [$id, $user, $entity, $entityID, $deletedAt] }

    init() {}

    init(userID: UUID, entity: SyncEntity, entityID: UUID, deletedAt: Date) {
        self.$user.id = userID
        self.entity = entity
        self.entityID = entityID
        self.deletedAt = deletedAt
    }
}
