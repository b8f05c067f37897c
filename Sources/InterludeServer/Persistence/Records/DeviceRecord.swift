import Fluent
import Foundation

/// Where a person's notifications can go: a browser's Web Push subscription or an app's APNs token.
package final class DeviceRecord: Model, @unchecked Sendable {
    package static let schema = "devices"

    package enum Platform: String, Codable, Sendable, CaseIterable {
        case webpush
        case apns
    }

    // managed
    @ID(key: .id) package var id: UUID?
    @Field(key: "created_at") var createdAt: Date
    @Field(key: "updated_at") var updatedAt: Date

    // references
    @Parent(key: "user_id") var user: UserRecord

    // data
    @Field(key: "platform") var platform: Platform
    /// The push endpoint URL (Web Push) or the device token (APNs); one device per address.
    @Field(key: "address") var address: String
    /// Web Push: the browser's P-256 public key and authentication secret, base64url.
    @OptionalField(key: "p256dh") var p256dh: String?
    @OptionalField(key: "auth") var auth: String?
    /// Set when the push service said the subscription is gone.
    @OptionalField(key: "disabled_at") var disabledAt: Date?
    @OptionalField(key: "disabled_reason") var disabledReason: String?

    /// Listed here so Fluent need not find them by reflection on every row (PropertyListTests keeps it whole).
    package var properties: [any AnyProperty] {
        [$id, $createdAt, $updatedAt, $user, $platform, $address, $p256dh, $auth, $disabledAt, $disabledReason]
    }

    package init() {}

    package init(userID: UUID, platform: Platform, address: String, p256dh: String?, auth: String?, now: Date) {
        self.$user.id = userID
        self.platform = platform
        self.address = address
        self.p256dh = p256dh
        self.auth = auth
        self.createdAt = now
        self.updatedAt = now
    }
}
