import Fluent
import Foundation

/// A person's notification choices, as JSON of `NotificationPreferences`.
final class NotificationPreferenceRecord: Model, @unchecked Sendable {
    static let schema = "notification_preferences"

    @ID(key: .id) var id: UUID?
    @Field(key: "updated_at") var updatedAt: Date
    @Parent(key: "user_id") var user: UserRecord
    @Field(key: "preferences") var preferences: String

    init() {}

    init(userID: UUID, preferences: String, now: Date) {
        self.$user.id = userID
        self.preferences = preferences
        self.updatedAt = now
    }
}
