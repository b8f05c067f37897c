import Fluent

/// Participants' own choice of how many reinforcement messages a day they receive, and when.
struct CreateMessageChoices: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema(MessageChoiceRecord.schema)
            .id()
            .field("patient_id", .uuid, .required, .references(UserRecord.schema, "id"))
            .field("study_id", .uuid, .required, .references(StudyRecord.schema, "id"))
            .field("per_day", .int, .required)
            .field("window_start", .string, .required)
            .field("window_end", .string, .required)
            .field("changed_at", .datetime, .required)
            .unique(on: "patient_id", "study_id")
            .create()
    }

    func revert(on database: any Database) async throws {
        try await database.schema(MessageChoiceRecord.schema).delete()
    }
}
