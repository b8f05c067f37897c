import Fluent

struct CreateErasures: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema(ErasureRecord.schema)
            .id()
            .field("role", .string, .required)
            .field("erased_at", .datetime, .required)
            .create()
    }

    func revert(on database: any Database) async throws {
        try await database.schema(ErasureRecord.schema).delete()
    }
}
