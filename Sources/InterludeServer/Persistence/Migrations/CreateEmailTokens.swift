import Fluent

struct CreateEmailTokens: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema(EmailTokenRecord.schema)
            .id()
            .field("created_at", .datetime, .required)
            .field("user_id", .uuid, .required, .references(UserRecord.schema, "id"))
            .field("purpose", .string, .required)
            .field("token_hash", .string, .required)
            .field("email", .string, .required)
            .field("expires_at", .datetime, .required)
            .field("used_at", .datetime)
            .unique(on: "token_hash")
            .create()
    }

    func revert(on database: any Database) async throws {
        try await database.schema(EmailTokenRecord.schema).delete()
    }
}
