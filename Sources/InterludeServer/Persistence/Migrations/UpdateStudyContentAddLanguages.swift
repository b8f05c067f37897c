import Fluent

/// A study's title and description, its event types, its reinforcement messages and its intervention templates in
/// every language they are written in, as JSON beside the plain text; empty on existing rows, which keep their one
/// language. (Sample-type reasons live in the study's sample settings JSON, which reads a plain text as before.)
struct UpdateStudyContentAddLanguages: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema(StudyRecord.schema).field("title_texts", .string, .required, .sql(.default("")))
            .update()
        try await database.schema(StudyRecord.schema).field("description_texts", .string, .required, .sql(.default("")))
            .update()
        try await database.schema(StudyRecord.schema).field("event_type_names", .string, .required, .sql(.default("")))
            .update()
        try await database.schema(StudyMessageRecord.schema).field("texts", .string, .required, .sql(.default("")))
            .update()
        try await database.schema(InterventionTemplateRecord.schema).field(
            "texts", .string, .required, .sql(.default(""))
        )
        .update()
    }

    func revert(on database: any Database) async throws {
        try await database.schema(InterventionTemplateRecord.schema).deleteField("texts").update()
        try await database.schema(StudyMessageRecord.schema).deleteField("texts").update()
        try await database.schema(StudyRecord.schema).deleteField("event_type_names").update()
        try await database.schema(StudyRecord.schema).deleteField("description_texts").update()
        try await database.schema(StudyRecord.schema).deleteField("title_texts").update()
    }
}
