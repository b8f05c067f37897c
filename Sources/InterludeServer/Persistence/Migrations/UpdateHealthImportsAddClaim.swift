import Fluent
import SQLKit

/// Health imports are read by whichever process runs the job, one at a time each: the run that holds one, until
/// when, and how many batches it finished, so that another run takes a killed one over where it stopped.
struct UpdateHealthImportsAddClaim: AsyncMigration {
    func prepare(on database: any Database) async throws {
        // One column per statement: SQLite adds one at a time.
        try await database.schema(HealthImportRecord.schema).field("claimed_by", .uuid).update()
        try await database.schema(HealthImportRecord.schema).field("claimed_until", .datetime).update()
        try await database.schema(HealthImportRecord.schema).field("batches", .int, .required, .sql(.default(0)))
            .update()
    }

    func revert(on database: any Database) async throws {
        try await database.schema(HealthImportRecord.schema).deleteField("batches").update()
        try await database.schema(HealthImportRecord.schema).deleteField("claimed_until").update()
        try await database.schema(HealthImportRecord.schema).deleteField("claimed_by").update()
    }
}
