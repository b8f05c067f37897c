import Fluent
import SQLKit

/// When a record's reminder is due (a therapy's approaching end), so the outbox finds them without opening any.
struct UpdateRecordsAddReminder: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema(EntryRecord.schema).field("remind_at", .datetime).update()
        guard let sql = database as? any SQLDatabase else { return }
        try await sql.create(index: "records_remind_at").on(EntryRecord.schema).column("remind_at").run()
    }

    func revert(on database: any Database) async throws {
        if let sql = database as? any SQLDatabase { try await sql.drop(index: "records_remind_at").run() }
        try await database.schema(EntryRecord.schema).deleteField("remind_at").update()
    }
}
