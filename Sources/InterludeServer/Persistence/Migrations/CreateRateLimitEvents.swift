import Fluent
import SQLKit

struct CreateRateLimitEvents: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema(RateLimitEventRecord.schema)
            .id()
            .field("scope", .string, .required)
            .field("key", .string, .required)
            .field("occurred_at", .datetime, .required)
            .create()
        try await (database as! any SQLDatabase)
            .create(index: "rate_limit_events_lookup")
            .on(RateLimitEventRecord.schema)
            .column("scope").column("key").column("occurred_at")
            .run()
    }

    func revert(on database: any Database) async throws {
        try await database.schema(RateLimitEventRecord.schema).delete()
    }
}
