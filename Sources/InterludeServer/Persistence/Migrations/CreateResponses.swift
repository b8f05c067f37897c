import Fluent
import SQLKit

struct CreateResponses: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema(ResponseRecord.schema)
            .id()
            .field("patient_id", .uuid, .required, .references(UserRecord.schema, "id"))
            .field("prompt_id", .uuid, .references(PromptRecord.schema, "id"))
            .field("instrument_key", .string, .required)
            .field("instrument_version", .int, .required)
            .field("answers", .string, .required)
            .field("scores", .string, .required)
            .field("opened_at", .datetime)
            .field("started_at", .datetime)
            .field("completed_at", .datetime, .required)
            .field("received_at", .datetime, .required)
            .create()
        try await (database as! any SQLDatabase)
            .create(index: "responses_patient_instrument")
            .on(ResponseRecord.schema)
            .column("patient_id").column("instrument_key").column("completed_at")
            .run()
    }

    func revert(on database: any Database) async throws {
        try await database.schema(ResponseRecord.schema).delete()
    }
}
