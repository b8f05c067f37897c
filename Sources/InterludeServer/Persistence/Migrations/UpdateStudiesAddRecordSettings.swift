import Fluent
import SQLKit

/// The health records a study or practice collects and the event types it adds; existing ones collect none.
struct UpdateStudiesAddRecordSettings: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema(StudyRecord.schema).field("record_kinds", .string, .required, .sql(.default("")))
            .update()
        try await database.schema(StudyRecord.schema).field("event_types", .string, .required, .sql(.default("[]")))
            .update()
    }

    func revert(on database: any Database) async throws {
        try await database.schema(StudyRecord.schema).deleteField("event_types").update()
        try await database.schema(StudyRecord.schema).deleteField("record_kinds").update()
    }
}
