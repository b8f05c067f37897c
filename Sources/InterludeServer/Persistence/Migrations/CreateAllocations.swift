import Fluent
import SQLKit

/// The allocation log, and each study's design (with the seed its random choices are drawn from), kept on the
/// server only. Studies that have arms already get their design when the next participant joins.
struct CreateAllocations: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema(StudyRecord.schema)
            .field("allocation_design", .string, .required, .sql(.default("")))
            .update()
        try await database.schema(AllocationRecord.schema)
            .id()
            .field("created_at", .datetime, .required)
            .field("study_id", .uuid, .required, .references(StudyRecord.schema, "id"))
            .field("participant_id", .uuid, .required)
            .field("recorded_by", .uuid)
            .field("sequence", .int, .required)
            .field("kind", .string, .required)
            .field("arm", .string, .required)
            .field("method", .string, .required)
            .field("stratum", .string, .required)
            .field("levels", .string, .required)
            .field("site", .string, .required)
            .field("slot", .int)
            .field("block", .int)
            .field("cycle", .int)
            .field("probability", .double)
            .field("reason", .string)
            .unique(on: "study_id", "sequence")
            .create()
    }

    func revert(on database: any Database) async throws {
        try await database.schema(AllocationRecord.schema).delete()
        try await database.schema(StudyRecord.schema).deleteField("allocation_design").update()
    }
}
