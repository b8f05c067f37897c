import Fluent

struct CreatePairingCodes: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema(PairingCodeRecord.schema)
            .id()
            .field("created_at", .datetime, .required)
            .field("therapist_id", .uuid, .required, .references(UserRecord.schema, "id"))
            .field("study_id", .uuid, .required, .references(StudyRecord.schema, "id"))
            .field("redeemed_by", .uuid, .references(UserRecord.schema, "id"))
            .field("code", .string, .required)
            .field("note", .string)
            .field("expires_at", .datetime, .required)
            .field("redeemed_at", .datetime)
            .unique(on: "code")
            .create()
    }

    func revert(on database: any Database) async throws {
        try await database.schema(PairingCodeRecord.schema).delete()
    }
}
