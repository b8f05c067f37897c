import Fluent

struct CreatePlanAdjustments: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema(PlanAdjustmentRecord.schema)
            .id()
            .field("updated_at", .datetime, .required)
            .field("plan_id", .uuid, .required, .references(PlanRecord.schema, "id"))
            .field("patient_id", .uuid, .required, .references(UserRecord.schema, "id"))
            .field("adjustment", .string, .required)
            .unique(on: "plan_id", "patient_id")
            .create()
    }

    func revert(on database: any Database) async throws {
        try await database.schema(PlanAdjustmentRecord.schema).delete()
    }
}
