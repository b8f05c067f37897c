import Fluent

/// The seconds spent per item that apps send with a response, and the quality indices worked out from them.
struct UpdateResponsesAddQuality: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema(ResponseRecord.schema).field("item_times", .string).update()
        try await database.schema(ResponseRecord.schema).field("quality", .string).update()
    }

    func revert(on database: any Database) async throws {
        try await database.schema(ResponseRecord.schema).deleteField("quality").update()
        try await database.schema(ResponseRecord.schema).deleteField("item_times").update()
    }
}
