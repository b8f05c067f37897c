import Fluent
import SQLKit

struct CreatePrompts: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema(PromptRecord.schema)
            .id()
            .field("created_at", .datetime, .required)
            .field("patient_id", .uuid, .required, .references(UserRecord.schema, "id"))
            .field("study_id", .uuid, .references(StudyRecord.schema, "id"))
            .field("assigned_by", .uuid, .references(UserRecord.schema, "id"))
            .field("instrument_key", .string, .required)
            .field("instrument_version", .int, .required)
            .field("opens_at", .datetime, .required)
            .field("closes_at", .datetime, .required)
            .field("status", .string, .required)
            .field("source", .string, .required)
            .field("plan_id", .uuid)
            .field("occurrence", .string)
            .field("opened_at", .datetime)
            .field("completed_at", .datetime)
            .field("response_id", .uuid)
            .create()
        try await (database as! any SQLDatabase)
            .create(index: "prompts_patient_window")
            .on(PromptRecord.schema)
            .column("patient_id").column("closes_at")
            .run()
    }

    func revert(on database: any Database) async throws {
        try await database.schema(PromptRecord.schema).delete()
    }
}
