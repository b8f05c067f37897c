import Fluent

/// When a therapist paused a client's treatment; nothing is planned for the client while it is set.
struct UpdateEnrollmentsAddPausedAt: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema(EnrollmentRecord.schema).field("paused_at", .datetime).update()
    }

    func revert(on database: any Database) async throws {
        try await database.schema(EnrollmentRecord.schema).deleteField("paused_at").update()
    }
}
