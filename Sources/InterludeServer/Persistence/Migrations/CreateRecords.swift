import Fluent
import SQLKit

struct CreateRecords: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema(EntryRecord.schema)
            .field("id", .uuid, .identifier(auto: false))
            .field("patient_id", .uuid, .required, .references(UserRecord.schema, "id"))
            .field("kind", .string, .required)
            .field("version", .int, .required)
            .field("occurred_at", .datetime, .required)
            .field("content", .string, .required)
            .field("created_at", .datetime, .required)
            .field("updated_at", .datetime, .required)
            .create()
        guard let sql = database as? any SQLDatabase else { return }
        try await sql.create(index: "records_patient_kind").on(EntryRecord.schema).column("patient_id").column("kind")
            .run()
    }

    func revert(on database: any Database) async throws {
        try await database.schema(EntryRecord.schema).delete()
    }
}
