import Fluent
import Foundation
import InterludeCore
import SQLKit

/// Study consents become versioned documents with modules. Each study's consent so far becomes its first
/// version; decisions recorded so far keep their version and learn nothing they did not record.
struct CreateConsentVersions: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema(ConsentVersionRecord.schema)
            .id()
            .field("study_id", .uuid, .required, .references(StudyRecord.schema, "id", onDelete: .cascade))
            .field("sequence", .int, .required)
            .field("version", .string, .required)
            .field("texts", .string, .required)
            .field("modules", .string, .required)
            .field("reconsent_required", .bool, .required)
            .field("created_at", .datetime, .required)
            .unique(on: "study_id", "sequence")
            .unique(on: "study_id", "version")
            .create()
        try await database.schema(ConsentRecord.schema).field("modules", .string).update()
        try await database.schema(ConsentRecord.schema).field("method", .string).update()
        try await database.schema(ConsentRecord.schema).field("replaced_at", .datetime).update()
        // Read with the columns studies have at this point of the history, not the model's later ones.
        guard let sql = database as? any SQLDatabase else { return }
        let studies = try await sql.select().columns("id", "consent_version", "consent_text", "created_at").from(
            StudyRecord.schema
        )
        .where("join_mode", .notEqual, SQLBind(JoinMode.pairingCode.rawValue)).all()
        for study in studies {
            let draft = ConsentVersionDraft(
                version: try study.decode(column: "consent_version", as: String.self),
                texts: LocalizedText([.fallback: try study.decode(column: "consent_text", as: String.self)]),
                modules: [],
                reconsentRequired: false)
            try await ConsentVersionRecord(
                studyID: try study.decode(column: "id", as: UUID.self), sequence: 1, draft: draft,
                now: try study.decode(column: "created_at", as: Date.self)
            ).create(on: database)
        }
    }

    func revert(on database: any Database) async throws {
        try await database.schema(ConsentRecord.schema).deleteField("replaced_at").update()
        try await database.schema(ConsentRecord.schema).deleteField("method").update()
        try await database.schema(ConsentRecord.schema).deleteField("modules").update()
        try await database.schema(ConsentVersionRecord.schema).delete()
    }
}
