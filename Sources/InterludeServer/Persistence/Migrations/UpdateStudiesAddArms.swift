import Fluent

/// Study arms and how participants are allocated to them. SQLite adds one column per ALTER TABLE, hence one
/// update per field.
struct UpdateStudiesAddArms: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema(StudyRecord.schema).field("arms", .string).update()
        try await database.schema(StudyRecord.schema).field("allocation", .string).update()
        try await database.schema(EnrollmentRecord.schema).field("arm", .string).update()
    }

    func revert(on database: any Database) async throws {
        try await database.schema(EnrollmentRecord.schema).deleteField("arm").update()
        try await database.schema(StudyRecord.schema).deleteField("allocation").update()
        try await database.schema(StudyRecord.schema).deleteField("arms").update()
    }
}
