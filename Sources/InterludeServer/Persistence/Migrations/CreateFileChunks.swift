import Fluent

/// Stored files in pieces, for installations on PostgreSQL whose processes do not share a disk.
struct CreateFileChunks: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema(FileChunkRecord.schema)
            .id()
            .field("file", .string, .required)
            .field("offset", .int64, .required)
            .field("data", .data, .required)
            .unique(on: "file", "offset")
            .create()
    }

    func revert(on database: any Database) async throws {
        try await database.schema(FileChunkRecord.schema).delete()
    }
}
