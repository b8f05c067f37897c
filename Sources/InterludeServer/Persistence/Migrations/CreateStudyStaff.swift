import Fluent

struct CreateStudyStaff: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema(StudyStaffRecord.schema)
            .id()
            .field("study_id", .uuid, .required, .references(StudyRecord.schema, "id"))
            .field("user_id", .uuid, .required, .references(UserRecord.schema, "id"))
            .field("role", .string, .required)
            .unique(on: "study_id", "user_id")
            .create()
    }

    func revert(on database: any Database) async throws {
        try await database.schema(StudyStaffRecord.schema).delete()
    }
}
