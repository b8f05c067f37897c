import Fluent

struct CreatePinnedNotes: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema(PinnedNoteRecord.schema)
            .id()
            .field("created_at", .datetime, .required)
            .field("patient_id", .uuid, .required, .references(UserRecord.schema, "id"))
            .field("study_id", .uuid, .required, .references(StudyRecord.schema, "id"))
            .field("author_id", .uuid, .required, .references(UserRecord.schema, "id"))
            .field("day", .string, .required)
            .field("text", .string, .required)
            .create()
    }

    func revert(on database: any Database) async throws {
        try await database.schema(PinnedNoteRecord.schema).delete()
    }
}
