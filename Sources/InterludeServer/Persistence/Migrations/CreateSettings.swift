import Fluent

struct CreateSettings: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema(SettingRecord.schema)
            .field("key", .string, .identifier(auto: false))
            .field("value", .string, .required)
            .field("updated_at", .datetime, .required)
            .create()
    }

    func revert(on database: any Database) async throws {
        try await database.schema(SettingRecord.schema).delete()
    }
}
