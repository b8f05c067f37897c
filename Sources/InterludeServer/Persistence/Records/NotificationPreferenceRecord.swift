import Fluent
import Foundation

/// A person's notification choices, as JSON of `NotificationPreferences`.
final class NotificationPreferenceRecord: Model, @unchecked Sendable {
    static let schema = "notification_preferences"

    @ID(key: .id) var id: UUID?
    @Field(key: "updated_at") var updatedAt: Date
    @Parent(key: "user_id") var user: UserRecord
    @Field(key: "preferences") var preferences: String

    /// Listed here so Fluent need not find them by reflection on every row (PropertyListTests keeps it whole).
    var properties: [any AnyProperty] { [$id, $updatedAt, $user, $preferences] }

    init() {}

    init(userID: UUID, preferences: String, now: Date) {
        self.$user.id = userID
        self.preferences = preferences
        self.updatedAt = now
    }
}
