import Fluent

/// The name a therapist shows a client under in their caseload, when it differs from the one the client gave.
struct UpdateEnrollmentsAddDisplayName: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema(EnrollmentRecord.schema).field("display_name", .string).update()
    }

    func revert(on database: any Database) async throws {
        try await database.schema(EnrollmentRecord.schema).deleteField("display_name").update()
    }
}
