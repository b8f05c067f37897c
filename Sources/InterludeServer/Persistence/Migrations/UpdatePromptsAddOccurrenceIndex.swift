import Fluent
import SQLKit

/// One prompt per plan occurrence and patient, so planning twice (or in two processes) creates nothing twice.
struct UpdatePromptsAddOccurrenceIndex: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await (database as! any SQLDatabase)
            .create(index: "prompts_plan_occurrence")
            .unique()
            .on(PromptRecord.schema)
            .column("patient_id").column("plan_id").column("occurrence")
            .run()
    }

    func revert(on database: any Database) async throws {
        try await (database as! any SQLDatabase).drop(index: "prompts_plan_occurrence").run()
    }
}
