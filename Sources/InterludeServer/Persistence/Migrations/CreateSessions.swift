import Fluent

struct CreateSessions: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema(SessionRecord.schema)
            .id()
            .field("created_at", .datetime, .required)
            .field("user_id", .uuid, .required, .references(UserRecord.schema, "id"))
            .field("kind", .string, .required)
            .field("token_hash", .string, .required)
            .field("csrf_token", .string)
            .field("expires_at", .datetime, .required)
            .field("last_used_at", .datetime, .required)
            .unique(on: "token_hash")
            .create()
    }

    func revert(on database: any Database) async throws {
        try await database.schema(SessionRecord.schema).delete()
    }
}
