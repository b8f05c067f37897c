import Fluent

struct CreatePlans: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema(PlanRecord.schema)
            .id()
            .field("created_at", .datetime, .required)
            .field("updated_at", .datetime, .required)
            .field("study_id", .uuid, .required, .references(StudyRecord.schema, "id"))
            .field("patient_id", .uuid, .references(UserRecord.schema, "id"))
            .field("created_by", .uuid, .required, .references(UserRecord.schema, "id"))
            .field("arm", .string)
            .field("instrument_key", .string, .required)
            .field("definition", .string, .required)
            .create()
    }

    func revert(on database: any Database) async throws {
        try await database.schema(PlanRecord.schema).delete()
    }
}
