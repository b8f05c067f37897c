import Fluent
import SQLKit

/// Samples from phones, watches and imports, the person's choice per type, their imports, and what each study
/// asks for.
struct CreateSamples: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema(SampleRecord.schema)
            .field("id", .uuid, .identifier(auto: false))
            .field("created_at", .datetime, .required)
            .field("patient_id", .uuid, .required, .references(UserRecord.schema, "id"))
            .field("type", .string, .required)
            .field("value", .double, .required)
            .field("start_at", .datetime, .required)
            .field("end_at", .datetime, .required)
            .field("source_id", .string, .required)
            .field("source_app", .string)
            .field("device_name", .string)
            .field("device_model", .string)
            .field("os_version", .string)
            .field("motion_context", .int)
            .unique(on: "patient_id", "source_id")
            .create()
        try await database.schema(SampleChoiceRecord.schema)
            .field("id", .uuid, .identifier(auto: false))
            .field("patient_id", .uuid, .required, .references(UserRecord.schema, "id"))
            .field("type", .string, .required)
            .field("enabled", .bool, .required)
            .field("changed_at", .datetime, .required)
            .unique(on: "patient_id", "type")
            .create()
        try await database.schema(HealthImportRecord.schema)
            .field("id", .uuid, .identifier(auto: false))
            .field("created_at", .datetime, .required)
            .field("updated_at", .datetime, .required)
            .field("patient_id", .uuid, .required, .references(UserRecord.schema, "id"))
            .field("format", .string, .required)
            .field("status", .string, .required)
            .field("size", .int64)
            .field("received", .int64, .required)
            .field("read", .int64, .required)
            .field("stored", .int, .required)
            .field("duplicates", .int, .required)
            .field("skipped_not_enabled", .int, .required)
            .field("skipped_outside_window", .int, .required)
            .field("skipped_invalid", .int, .required)
            .field("skipped_other_types", .int, .required)
            .field("problem", .string)
            .field("finished_at", .datetime)
            .create()
        try await database.schema(StudyRecord.schema).field("sample_settings", .string, .required, .sql(.default("")))
            .update()
        guard let sql = database as? any SQLDatabase else { return }
        try await sql.create(index: "samples_patient_type_start").on(SampleRecord.schema)
            .column("patient_id").column("type").column("start_at").run()
        try await sql.create(index: "health_imports_status").on(HealthImportRecord.schema).column("status").run()
    }

    func revert(on database: any Database) async throws {
        try await database.schema(StudyRecord.schema).deleteField("sample_settings").update()
        try await database.schema(HealthImportRecord.schema).delete()
        try await database.schema(SampleChoiceRecord.schema).delete()
        try await database.schema(SampleRecord.schema).delete()
    }
}
