import Fluent

struct CreateTherapistProfiles: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema(TherapistProfileRecord.schema)
            .id()
            .field("user_id", .uuid, .required, .references(UserRecord.schema, "id"))
            .field("full_name", .string, .required)
            .field("gender", .string)
            .field("office_address", .string)
            .field("phone", .string)
            .field("emergency_number", .string)
            .unique(on: "user_id")
            .create()
    }

    func revert(on database: any Database) async throws {
        try await database.schema(TherapistProfileRecord.schema).delete()
    }
}
