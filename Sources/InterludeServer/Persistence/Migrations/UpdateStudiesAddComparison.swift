import Fluent
import SQLKit

/// Whether a study shows participants their results against everyone's; existing studies do not.
struct UpdateStudiesAddComparison: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema(StudyRecord.schema).field("comparison", .string, .required, .sql(.default("off")))
            .update()
        try await database.schema(PatientProfileRecord.schema)
            .field("hides_comparison", .bool, .required, .sql(.default(false))).update()
    }

    func revert(on database: any Database) async throws {
        try await database.schema(PatientProfileRecord.schema).deleteField("hides_comparison").update()
        try await database.schema(StudyRecord.schema).deleteField("comparison").update()
    }
}
