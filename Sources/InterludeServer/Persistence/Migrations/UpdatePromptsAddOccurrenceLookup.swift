import Fluent
import SQLKit

/// Finds a patient's one-time prompts without reading every prompt they have: each submission asks whether one
/// of them still waits (`PromptService.blocked`), and a patient in a long study has hundreds of prompts.
struct UpdatePromptsAddOccurrenceLookup: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await (database as! any SQLDatabase)
            .create(index: "prompts_patient_occurrence")
            .on(PromptRecord.schema)
            .column("patient_id").column("occurrence")
            .run()
    }

    func revert(on database: any Database) async throws {
        try await (database as! any SQLDatabase).drop(index: "prompts_patient_occurrence").run()
    }
}
