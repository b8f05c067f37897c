import Fluent
import SQLKit

/// Which kinds of records each consent version covers: what a participant agreed to be collected. Versions written
/// before cover what their study collects now.
struct UpdateConsentVersionsAddCollects: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema(ConsentVersionRecord.schema).field("collects", .string).update()
        guard let sql = database as? any SQLDatabase else { return }
        try await sql.raw(
            """
            UPDATE consent_versions SET collects = \
            (SELECT studies.record_kinds FROM studies WHERE studies.id = consent_versions.study_id)
            """
        ).run()
    }

    func revert(on database: any Database) async throws {
        try await database.schema(ConsentVersionRecord.schema).deleteField("collects").update()
    }
}
