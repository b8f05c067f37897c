import Fluent
import SQLKit

/// One response per prompt, held by the database rather than by a check before the insert. Responses that answered
/// the same prompt before this rule existed keep their answers: the first received keeps the prompt, the later ones
/// are detached from it.
struct UpdateResponsesUniquePrompt: AsyncMigration {
    func prepare(on database: any Database) async throws {
        let sql = database as! any SQLDatabase
        try await sql.raw(
            """
            UPDATE responses SET prompt_id = NULL
            WHERE prompt_id IS NOT NULL AND EXISTS (
                SELECT 1 FROM responses AS earlier
                WHERE earlier.prompt_id = responses.prompt_id
                AND (earlier.received_at < responses.received_at
                    OR (earlier.received_at = responses.received_at AND earlier.id < responses.id)))
            """
        ).run()
        try await sql.create(index: "responses_prompt").unique().on(ResponseRecord.schema).column("prompt_id").run()
    }

    func revert(on database: any Database) async throws {
        try await (database as! any SQLDatabase).drop(index: "responses_prompt").run()
    }
}
