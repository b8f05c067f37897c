import Fluent

struct CreateSelfExports: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema(SelfExportRecord.schema)
            .id()
            .field("user_id", .uuid, .required, .references(UserRecord.schema, "id"))
            .field("status", .string, .required)
            .field("claimed_until", .datetime)
            .field("created_at", .datetime, .required)
            .field("finished_at", .datetime)
            .field("expires_at", .datetime)
            .field("downloaded_at", .datetime)
            .field("size", .int)
            .create()
    }

    func revert(on database: any Database) async throws {
        try await database.schema(SelfExportRecord.schema).delete()
    }
}
