import Fluent

struct CreateConsents: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema(ConsentRecord.schema)
            .id()
            .field("user_id", .uuid, .required, .references(UserRecord.schema, "id"))
            .field("study_id", .uuid, .references(StudyRecord.schema, "id"))
            .field("document", .string, .required)
            .field("version", .string, .required)
            .field("granted_at", .datetime, .required)
            .field("revoked_at", .datetime)
            .create()
    }

    func revert(on database: any Database) async throws {
        try await database.schema(ConsentRecord.schema).delete()
    }
}
