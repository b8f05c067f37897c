import Fluent
import SQLKit

/// The study a response belongs to (its prompt's), so that every read can be limited to the studies the reader
/// may see without a join; existing responses take it from their prompts.
struct UpdateResponsesAddStudy: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema(ResponseRecord.schema)
            .field("study_id", .uuid, .references(StudyRecord.schema, "id"))
            .update()
        let sql = database as! any SQLDatabase
        try await sql.raw(
            """
            UPDATE responses SET study_id = (SELECT prompts.study_id FROM prompts WHERE prompts.id = responses.prompt_id)
            """
        ).run()
        try await sql.create(index: "responses_patient_study").on(ResponseRecord.schema)
            .column("patient_id").column("study_id").run()
    }

    func revert(on database: any Database) async throws {
        try await (database as! any SQLDatabase).drop(index: "responses_patient_study").run()
        try await database.schema(ResponseRecord.schema).deleteField("study_id").update()
    }
}
