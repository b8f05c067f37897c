import Fluent
import InterludeCore
import SQLKit

/// When a study closed and how long identifying data outlives it; studies closed before count from their last change.
struct UpdateStudiesAddClosing: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema(StudyRecord.schema).field("closed_at", .datetime).update()
        try await database.schema(StudyRecord.schema)
            .field("retention_days", .int, .required, .sql(.default(StudyDraft.defaultRetentionDays))).update()
        guard let sql = database as? any SQLDatabase else { return }
        try await sql.update(StudyRecord.schema).set("closed_at", to: SQLIdentifier("updated_at"))
            .where("status", .equal, SQLBind(StudyStatus.closed.rawValue)).run()
    }

    func revert(on database: any Database) async throws {
        try await database.schema(StudyRecord.schema).deleteField("retention_days").update()
        try await database.schema(StudyRecord.schema).deleteField("closed_at").update()
    }
}
