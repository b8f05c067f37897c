import Fluent

/// Micro-randomised decision points: each study's plan with its seed, and the log of every participant's points.
struct CreateDecisionPoints: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema(DecisionPlanRecord.schema)
            .id()
            .field("created_at", .datetime, .required)
            .field("updated_at", .datetime, .required)
            .field("study_id", .uuid, .required, .references(StudyRecord.schema, "id"))
            .field("definition", .string, .required)
            .field("seed", .int64, .required)
            .unique(on: "study_id")
            .create()
        try await database.schema(DecisionPointRecord.schema)
            .id()
            .field("created_at", .datetime, .required)
            .field("study_id", .uuid, .required, .references(StudyRecord.schema, "id"))
            .field("patient_id", .uuid, .required, .references(UserRecord.schema, "id"))
            .field("intervention_id", .uuid)
            .field("prompt_id", .uuid)
            .field("point", .string, .required)
            .field("at", .datetime, .required)
            .field("time_zone", .string, .required)
            .field("available", .bool, .required)
            .field("probability", .double)
            .field("assigned", .bool)
            .field("option", .int)
            .field("outcome_ends", .datetime, .required)
            .unique(on: "study_id", "patient_id", "point")
            .create()
    }

    func revert(on database: any Database) async throws {
        try await database.schema(DecisionPointRecord.schema).delete()
        try await database.schema(DecisionPlanRecord.schema).delete()
    }
}
