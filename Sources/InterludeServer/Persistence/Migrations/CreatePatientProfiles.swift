import Fluent

struct CreatePatientProfiles: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema(PatientProfileRecord.schema)
            .id()
            .field("user_id", .uuid, .required, .references(UserRecord.schema, "id"))
            .field("pseudonym", .string, .required)
            .field("share_with_research", .bool, .required)
            .field("date_of_birth", .string)
            .field("gender", .string)
            .field("therapy_start", .string)
            .field("therapy_end", .string)
            .unique(on: "user_id")
            .unique(on: "pseudonym")
            .create()
    }

    func revert(on database: any Database) async throws {
        try await database.schema(PatientProfileRecord.schema).delete()
    }
}
