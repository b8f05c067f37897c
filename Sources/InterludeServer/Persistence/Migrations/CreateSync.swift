import Fluent
import SQLKit

/// What apps need to sync: when each prompt last changed, tombstones for what went, and the changes apps sent.
struct CreateSync: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema(PromptRecord.schema).field("changed_at", .datetime).update()
        let sql = database as! any SQLDatabase
        try await sql.update(PromptRecord.schema).set(SQLIdentifier("changed_at"), to: SQLIdentifier("created_at"))
            .run()
        try await sql.create(index: "prompts_patient_changed").on(PromptRecord.schema)
            .column("patient_id").column("changed_at").run()
        try await sql.create(index: "appointments_patient_updated").on(AppointmentRecord.schema)
            .column("patient_id").column("updated_at").run()
        try await database.schema(SyncTombstoneRecord.schema)
            .id()
            .field("user_id", .uuid, .required, .references(UserRecord.schema, "id"))
            .field("entity", .string, .required)
            .field("entity_id", .uuid, .required)
            .field("deleted_at", .datetime, .required)
            .create()
        try await sql.create(index: "sync_tombstones_user_deleted").on(SyncTombstoneRecord.schema)
            .column("user_id").column("deleted_at").run()
        try await database.schema(SyncMutationRecord.schema)
            .id()
            .field("created_at", .datetime, .required)
            .field("user_id", .uuid, .required, .references(UserRecord.schema, "id"))
            .field("result", .string, .required)
            .create()
    }

    func revert(on database: any Database) async throws {
        let sql = database as! any SQLDatabase
        try await database.schema(SyncMutationRecord.schema).delete()
        try await database.schema(SyncTombstoneRecord.schema).delete()
        try await sql.drop(index: "appointments_patient_updated").run()
        try await sql.drop(index: "prompts_patient_changed").run()
        try await database.schema(PromptRecord.schema).deleteField("changed_at").update()
    }
}
