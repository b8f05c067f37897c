import Fluent
import SQLKit

/// Erasures remember what they removed as keyed hashes, and whether they took an account or a study's data;
/// earlier erasures took accounts and kept no hashes.
struct CreateErasedIDs: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema(ErasureRecord.schema)
            .field("scope", .string, .required, .sql(.default("account")))
            .update()
        try await database.schema(ErasureRecord.schema)
            .field("study_id", .uuid, .references(StudyRecord.schema, "id", onDelete: .setNull))
            .update()
        try await database.schema(ErasedIDRecord.schema)
            .id()
            .field("erasure_id", .uuid, .required, .references(ErasureRecord.schema, "id", onDelete: .cascade))
            .field("table_name", .string, .required)
            .field("digest", .string, .required)
            .create()
        guard let sql = database as? any SQLDatabase else { return }
        try await sql.create(index: "erased_ids_digest").on(ErasedIDRecord.schema).column("digest").run()
    }

    func revert(on database: any Database) async throws {
        try await database.schema(ErasedIDRecord.schema).delete()
        try await database.schema(ErasureRecord.schema).deleteField("study_id").update()
        try await database.schema(ErasureRecord.schema).deleteField("scope").update()
    }
}
