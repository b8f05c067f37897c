import Fluent

/// Exports of research data, the log of whose data each holds, and patients' time zone history.
struct CreateExports: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema(ExportRecord.schema)
            .id()
            .field("created_at", .datetime, .required)
            .field("study_id", .uuid, .required, .references(StudyRecord.schema, "id", onDelete: .cascade))
            .field("requested_by", .uuid, .references(UserRecord.schema, "id"))
            .field("since", .datetime)
            .field("status", .string, .required)
            .field("progress", .int, .required)
            .field("participants", .int, .required)
            .field("prompts", .int, .required)
            .field("responses", .int, .required)
            .field("error", .string)
            .field("claimed_until", .datetime)
            .field("claimed_by", .uuid)
            .field("finished_at", .datetime)
            .field("expires_at", .datetime)
            .field("size", .int64)
            .field("sha256", .string)
            .create()
        try await database.schema(ExportParticipantRecord.schema)
            .id()
            .field("export_id", .uuid, .required, .references(ExportRecord.schema, "id", onDelete: .cascade))
            .field("patient_id", .uuid, .required, .references(UserRecord.schema, "id"))
            .field("pseudonym", .string, .required)
            .unique(on: "export_id", "patient_id")
            .create()
        try await database.schema(TimeZoneChangeRecord.schema)
            .id()
            .field("user_id", .uuid, .required, .references(UserRecord.schema, "id"))
            .field("time_zone", .string, .required)
            .field("since", .datetime, .required)
            .create()
    }

    func revert(on database: any Database) async throws {
        try await database.schema(TimeZoneChangeRecord.schema).delete()
        try await database.schema(ExportParticipantRecord.schema).delete()
        try await database.schema(ExportRecord.schema).delete()
    }
}
