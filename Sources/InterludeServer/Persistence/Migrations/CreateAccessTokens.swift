import Fluent

/// Personal access tokens.
struct CreateAccessTokens: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema(AccessTokenRecord.schema)
            .id()
            .field("created_at", .datetime, .required)
            .field("user_id", .uuid, .required, .references(UserRecord.schema, "id"))
            .field("name", .string, .required)
            .field("scope", .string, .required)
            .field("study_ids", .string, .required)
            .field("token_hash", .string, .required)
            .field("expires_at", .datetime, .required)
            .field("last_used_at", .datetime)
            .unique(on: "token_hash")
            .create()
    }

    func revert(on database: any Database) async throws {
        try await database.schema(AccessTokenRecord.schema).delete()
    }
}
