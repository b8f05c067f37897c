import Fluent
import SQLKit

struct CreateUsers: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema(UserRecord.schema)
            .id()
            .field("created_at", .datetime, .required)
            .field("updated_at", .datetime, .required)
            .field("email", .string, .required)
            .field("password_hash", .string, .required)
            .field("role", .string, .required)
            .field("name", .string)
            .field("locale", .string, .required)
            .field("time_zone", .string, .required)
            .field("email_verified_at", .datetime)
            .field("must_change_password", .bool, .required)
            .field("deactivated_at", .datetime)
            .field("last_active_at", .datetime)
            .unique(on: "email")
            .create()
    }

    func revert(on database: any Database) async throws {
        try await database.schema(UserRecord.schema).delete()
    }
}
