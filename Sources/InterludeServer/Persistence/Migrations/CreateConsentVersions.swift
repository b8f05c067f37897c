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
        let studies = try await StudyRecord.query(on: database).filter(\.$joinMode != JoinMode.pairingCode).all()
        for study in studies {
            let draft = ConsentVersionDraft(
                version: study.consentVersion, texts: LocalizedText([.fallback: study.consentText]), modules: [],
                reconsentRequired: false)
            try await ConsentVersionRecord(studyID: try study.requireID(), sequence: 1, draft: draft, now: study.createdAt)
                .create(on: database)
        }
    }

    func revert(on database: any Database) async throws {
        try await database.schema(ConsentRecord.schema).deleteField("replaced_at").update()
        try await database.schema(ConsentRecord.schema).deleteField("method").update()
        try await database.schema(ConsentRecord.schema).deleteField("modules").update()
        try await database.schema(ConsentVersionRecord.schema).delete()
    }
}
