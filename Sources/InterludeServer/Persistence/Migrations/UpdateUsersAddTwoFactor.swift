import Fluent

/// Two-factor sign-in: the authenticator secret (sealed), one being set up, when it was turned on and the last
/// 30-second step a code was used for, so a code works once.
struct UpdateUsersAddTwoFactor: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema(UserRecord.schema).field("totp_secret", .string).update()
        try await database.schema(UserRecord.schema).field("totp_pending_secret", .string).update()
        try await database.schema(UserRecord.schema).field("totp_enabled_at", .datetime).update()
        try await database.schema(UserRecord.schema).field("totp_last_step", .int64).update()
    }

    func revert(on database: any Database) async throws {
        for field in ["totp_last_step", "totp_enabled_at", "totp_pending_secret", "totp_secret"] {
            try await database.schema(UserRecord.schema).deleteField(.string(field)).update()
        }
    }
}
