import Fluent

/// Why a notification did not reach its person and what each channel answered; why a prompt was withdrawn.
struct UpdateNotificationsAddOutcomes: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema(NotificationRecord.schema).field("miss", .string).update()
        try await database.schema(NotificationRecord.schema).field("attempt_log", .string).update()
        try await database.schema(PromptRecord.schema).field("cancel_reason", .string).update()
    }

    func revert(on database: any Database) async throws {
        try await database.schema(PromptRecord.schema).deleteField("cancel_reason").update()
        try await database.schema(NotificationRecord.schema).deleteField("attempt_log").update()
        try await database.schema(NotificationRecord.schema).deleteField("miss").update()
    }
}
