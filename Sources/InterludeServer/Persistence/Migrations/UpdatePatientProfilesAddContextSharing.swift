import Fluent
import SQLKit

/// Whether the person lets their therapist keep context with answers; nobody does until they say so.
struct UpdatePatientProfilesAddContextSharing: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema(PatientProfileRecord.schema)
            .field("shares_context_with_therapist", .bool, .required, .sql(.default(false))).update()
    }

    func revert(on database: any Database) async throws {
        try await database.schema(PatientProfileRecord.schema).deleteField("shares_context_with_therapist").update()
    }
}
