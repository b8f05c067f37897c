import Fluent
import Foundation
import InterludeCore

/// An account of any role.
package final class UserRecord: Model, @unchecked Sendable {
    package static let schema = "users"

    // managed
    @ID(key: .id) package var id: UUID?
    @Field(key: "created_at") var createdAt: Date
    @Field(key: "updated_at") var updatedAt: Date

    // data
    @Field(key: "email") package var email: String
    @Field(key: "password_hash") var passwordHash: String
    @Field(key: "role") var role: Role
    @OptionalField(key: "name") var name: String?
    @Field(key: "locale") var locale: String
    @Field(key: "time_zone") var timeZone: String
    @OptionalField(key: "email_verified_at") package var emailVerifiedAt: Date?
    @Field(key: "must_change_password") var mustChangePassword: Bool
    @OptionalField(key: "deactivated_at") var deactivatedAt: Date?
    @OptionalField(key: "last_active_at") var lastActiveAt: Date?
    /// A staff account an admin deleted: address and name are gone, the row stays for the audit log.
    @OptionalField(key: "deleted_at") var deletedAt: Date?

    // two-factor sign-in (staff); secrets sealed by `FieldCipher`
    @OptionalField(key: "totp_secret") var totpSecret: String?
    @OptionalField(key: "totp_pending_secret") var totpPendingSecret: String?
    @OptionalField(key: "totp_enabled_at") var totpEnabledAt: Date?
    @OptionalField(key: "totp_last_step") var totpLastStep: Int64?

    /// Listed here so Fluent need not find them by reflection on every row (PropertyListTests keeps it whole).
    package var properties: [any AnyProperty] {
        [
            $id, $createdAt, $updatedAt, $email, $passwordHash, $role, $name, $locale, $timeZone, $emailVerifiedAt,
            $mustChangePassword, $deactivatedAt, $lastActiveAt, $deletedAt, $totpSecret, $totpPendingSecret,
            $totpEnabledAt, $totpLastStep,
        ]
    }

    package init() {}

    package init(
        id: UUID? = nil, email: String, passwordHash: String, role: Role, name: String?, locale: String,
        timeZone: String, mustChangePassword: Bool, now: Date
    ) {
        self.id = id
        self.email = email
        self.passwordHash = passwordHash
        self.role = role
        self.name = name
        self.locale = locale
        self.timeZone = timeZone
        self.mustChangePassword = mustChangePassword
        self.createdAt = now
        self.updatedAt = now
    }
}
