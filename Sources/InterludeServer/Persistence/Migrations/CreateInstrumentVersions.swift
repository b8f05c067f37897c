import Fluent

struct CreateInstrumentVersions: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema(InstrumentVersionRecord.schema)
            .id()
            .field("created_at", .datetime, .required)
            .field("created_by", .uuid, .references(UserRecord.schema, "id"))
            .field("key", .string, .required)
            .field("version", .int, .required)
            .field("title", .string, .required)
            .field("status", .string, .required)
            .field("origin", .string, .required)
            .field("definition", .string, .required)
            .field("published_at", .datetime)
            .unique(on: "key", "version")
            .create()
    }

    func revert(on database: any Database) async throws {
        try await database.schema(InstrumentVersionRecord.schema).delete()
    }
}
