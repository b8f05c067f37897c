import Fluent

struct CreateStudies: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema(StudyRecord.schema)
            .id()
            .field("created_at", .datetime, .required)
            .field("updated_at", .datetime, .required)
            .field("owner_id", .uuid, .required, .references(UserRecord.schema, "id"))
            .field("title", .string, .required)
            .field("description", .string, .required)
            .field("consent_text", .string, .required)
            .field("consent_version", .string, .required)
            .field("join_mode", .string, .required)
            .field("join_password_hash", .string)
            .field("status", .string, .required)
            .create()
    }

    func revert(on database: any Database) async throws {
        try await database.schema(StudyRecord.schema).delete()
    }
}
