import Fluent
import SQLKit

/// Whether a study's exports carry participants' birth year and gender; no study did before.
struct UpdateStudiesAddDemographics: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema(StudyRecord.schema).field(
            "asks_demographics", .bool, .required, .sql(.default(false))
        ).update()
    }

    func revert(on database: any Database) async throws {
        try await database.schema(StudyRecord.schema).deleteField("asks_demographics").update()
    }
}
