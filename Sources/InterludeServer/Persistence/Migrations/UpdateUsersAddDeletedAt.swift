import Fluent

/// When an admin deleted a staff account: its personal data is gone, its id stays for the audit log.
struct UpdateUsersAddDeletedAt: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema(UserRecord.schema).field("deleted_at", .datetime).update()
    }

    func revert(on database: any Database) async throws {
        try await database.schema(UserRecord.schema).deleteField("deleted_at").update()
    }
}
