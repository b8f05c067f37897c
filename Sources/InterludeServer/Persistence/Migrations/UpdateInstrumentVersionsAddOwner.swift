import Fluent
import SQLKit

/// An imported instrument belongs to the study (or practice) that imported it, and may be shared with other
/// studies. Instruments imported before ownership existed belong to no study and count as shared: they were open to
/// every study, so from now on only an administrator publishes new versions of them.
struct UpdateInstrumentVersionsAddOwner: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema(InstrumentVersionRecord.schema)
            .field("owner_study_id", .uuid, .references(StudyRecord.schema, "id", onDelete: .setNull))
            .update()
        try await database.schema(InstrumentVersionRecord.schema)
            .field("shared", .bool, .required, .sql(.default(false)))
            .update()
        let sql = database as! any SQLDatabase
        try await sql.update(InstrumentVersionRecord.schema)
            .set("shared", to: SQLLiteral.boolean(true))
            .where("origin", .notEqual, "library")
            .run()
    }

    func revert(on database: any Database) async throws {
        try await database.schema(InstrumentVersionRecord.schema).deleteField("shared").update()
        try await database.schema(InstrumentVersionRecord.schema).deleteField("owner_study_id").update()
    }
}
