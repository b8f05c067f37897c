import Fluent

struct CreateCalendarFeeds: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema(CalendarFeedRecord.schema)
            .id()
            .field("created_at", .datetime, .required)
            .field("patient_id", .uuid, .required, .references(UserRecord.schema, "id"))
            .field("token_hash", .string, .required)
            .field("sealed_token", .string, .required)
            .unique(on: "patient_id")
            .unique(on: "token_hash")
            .create()
    }

    func revert(on database: any Database) async throws {
        try await database.schema(CalendarFeedRecord.schema).delete()
    }
}
