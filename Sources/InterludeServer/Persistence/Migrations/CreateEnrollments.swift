import Fluent

struct CreateEnrollments: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema(EnrollmentRecord.schema)
            .id()
            .field("created_at", .datetime, .required)
            .field("updated_at", .datetime, .required)
            .field("study_id", .uuid, .required, .references(StudyRecord.schema, "id"))
            .field("patient_id", .uuid, .required, .references(UserRecord.schema, "id"))
            .field("therapist_id", .uuid, .references(UserRecord.schema, "id"))
            .field("status", .string, .required)
            .field("consent_version", .string, .required)
            .create()
    }

    func revert(on database: any Database) async throws {
        try await database.schema(EnrollmentRecord.schema).delete()
    }
}
