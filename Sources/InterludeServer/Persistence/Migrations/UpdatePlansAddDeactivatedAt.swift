import Fluent

/// When a study leader deactivated a plan's questionnaire; nothing new is planned from it while it is set.
struct UpdatePlansAddDeactivatedAt: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema(PlanRecord.schema).field("deactivated_at", .datetime).update()
    }

    func revert(on database: any Database) async throws {
        try await database.schema(PlanRecord.schema).deleteField("deactivated_at").update()
    }
}
