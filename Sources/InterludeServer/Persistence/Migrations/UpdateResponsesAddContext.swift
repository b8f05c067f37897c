import Fluent

/// Responses may carry the context they were answered in, sealed like the answers; none did before.
struct UpdateResponsesAddContext: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema(ResponseRecord.schema).field("context", .string).update()
    }

    func revert(on database: any Database) async throws {
        try await database.schema(ResponseRecord.schema).deleteField("context").update()
    }
}
