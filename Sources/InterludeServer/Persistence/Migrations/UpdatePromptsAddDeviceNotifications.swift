import Fluent

/// Prompts keep when a native app's own notification for them was first planned and first shown. One column per
/// change, as SQLite alters a table.
struct UpdatePromptsAddDeviceNotifications: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema(PromptRecord.schema).field("device_planned_at", .datetime).update()
        try await database.schema(PromptRecord.schema).field("device_notified_at", .datetime).update()
    }

    func revert(on database: any Database) async throws {
        try await database.schema(PromptRecord.schema).deleteField("device_notified_at").update()
        try await database.schema(PromptRecord.schema).deleteField("device_planned_at").update()
    }
}
