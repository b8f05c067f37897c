import Fluent

/// The arm a consent version is written for; versions written before are everybody's.
struct UpdateConsentVersionsAddArm: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema(ConsentVersionRecord.schema).field("arm", .string).update()
    }

    func revert(on database: any Database) async throws {
        try await database.schema(ConsentVersionRecord.schema).deleteField("arm").update()
    }
}
