import Fluent
import SQLKit

/// A keyed hash of a thought's words as they are compared, so the same words written again find their thought
/// without opening every record, and two devices sending a new thought at once make one. Other kinds leave it
/// empty, which the unique index does not count.
struct UpdateRecordsAddMatchKey: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema(EntryRecord.schema).field("match_key", .string).update()
        guard let sql = database as? any SQLDatabase else { return }
        try await sql.create(index: "records_patient_match_key").unique().on(EntryRecord.schema).column("patient_id")
            .column("match_key")
            .run()
    }

    func revert(on database: any Database) async throws {
        if let sql = database as? any SQLDatabase { try await sql.drop(index: "records_patient_match_key").run() }
        try await database.schema(EntryRecord.schema).deleteField("match_key").update()
    }
}
