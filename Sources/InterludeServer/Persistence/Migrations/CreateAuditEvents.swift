import Fluent

struct CreateAuditEvents: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema(AuditEventRecord.schema)
            .id()
            .field("occurred_at", .datetime, .required)
            .field("actor_id", .uuid, .required)
            .field("actor_role", .string, .required)
            .field("action", .string, .required)
            .field("subject_id", .uuid)
            .field("target", .string)
            .create()
    }

    func revert(on database: any Database) async throws {
        try await database.schema(AuditEventRecord.schema).delete()
    }
}
