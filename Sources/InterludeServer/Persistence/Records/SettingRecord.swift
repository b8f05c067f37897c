import Fluent
import Foundation

/// A value the admin can change at run time, such as the privacy policy text.
final class SettingRecord: Model, @unchecked Sendable {
    static let schema = "settings"

    @ID(custom: "key", generatedBy: .user) var id: String?
    @Field(key: "value") var value: String
    @Field(key: "updated_at") var updatedAt: Date

    /// Listed here so Fluent need not find them by reflection on every row (PropertyListTests keeps it whole).
    var properties: [any AnyProperty] { [$id, $value, $updatedAt] }

    init() {}

    init(key: String, value: String, now: Date) {
        self.id = key
        self.value = value
        self.updatedAt = now
    }
}
