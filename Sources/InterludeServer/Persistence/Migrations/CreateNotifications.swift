import Fluent
import SQLKit

/// Devices, the notification outbox and notification preferences.
struct CreateNotifications: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema(DeviceRecord.schema)
            .id()
            .field("created_at", .datetime, .required)
            .field("updated_at", .datetime, .required)
            .field("user_id", .uuid, .required, .references(UserRecord.schema, "id"))
            .field("platform", .string, .required)
            .field("address", .string, .required)
            .field("p256dh", .string)
            .field("auth", .string)
            .field("disabled_at", .datetime)
            .field("disabled_reason", .string)
            .unique(on: "address")
            .create()
        try await database.schema(NotificationRecord.schema)
            .id()
            .field("created_at", .datetime, .required)
            .field("user_id", .uuid, .required, .references(UserRecord.schema, "id"))
            .field("prompt_id", .uuid)
            .field("appointment_id", .uuid)
            .field("category", .string, .required)
            .field("dedupe_key", .string, .required)
            .field("title", .string, .required)
            .field("body", .string, .required)
            .field("path", .string, .required)
            .field("due_at", .datetime, .required)
            .field("expires_at", .datetime, .required)
            .field("status", .string, .required)
            .field("attempts", .int, .required)
            .field("next_attempt_at", .datetime, .required)
            .field("claimed_until", .datetime)
            .field("channel", .string)
            .field("receipt", .string)
            .field("sent_at", .datetime)
            .field("clicked_at", .datetime)
            .unique(on: "dedupe_key")
            .create()
        try await database.schema(NotificationPreferenceRecord.schema)
            .id()
            .field("updated_at", .datetime, .required)
            .field("user_id", .uuid, .required, .references(UserRecord.schema, "id"))
            .field("preferences", .string, .required)
            .unique(on: "user_id")
            .create()
        let sql = database as! any SQLDatabase
        try await sql.create(index: "notifications_due").on(NotificationRecord.schema)
            .column("status").column("next_attempt_at").run()
        try await sql.create(index: "prompts_opens_at").on(PromptRecord.schema).column("opens_at").run()
        try await sql.create(index: "appointments_starts_at").on(AppointmentRecord.schema).column("starts_at").run()
    }

    func revert(on database: any Database) async throws {
        let sql = database as! any SQLDatabase
        try await sql.drop(index: "appointments_starts_at").run()
        try await sql.drop(index: "prompts_opens_at").run()
        try await database.schema(NotificationPreferenceRecord.schema).delete()
        try await database.schema(NotificationRecord.schema).delete()
        try await database.schema(DeviceRecord.schema).delete()
    }
}
