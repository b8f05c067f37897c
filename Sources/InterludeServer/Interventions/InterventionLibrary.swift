import Fluent
import Foundation
import InterludeCore

/// A study's ready-made intervention texts, its pool of reinforcement messages and its message plan.
struct InterventionLibrary: Sendable {
    let database: any Database
    let services: AppServices

    private var now: Date { services.clock.now }

    struct Contents: Sendable {
        let templates: [InterventionTemplateRecord]
        let messages: [StudyMessageRecord]
        let plan: MessagePlan?
    }

    func contents(of studyID: UUID) async throws -> Contents {
        Contents(
            templates: try await InterventionTemplateRecord.query(on: database).filter(\.$study.$id == studyID)
                .sort(\.$createdAt).all(),
            messages: try await StudyMessageRecord.query(on: database).filter(\.$study.$id == studyID)
                .sort(\.$createdAt).all(),
            plan: try await plan(of: studyID))
    }

    func addTemplate(_ draft: InterventionTemplateDraft, in grant: StudyGrant) async throws {
        try grant.require(.editLibrary)
        let record = InterventionTemplateRecord(studyID: grant.studyID, kind: draft.kind, texts: draft.texts, now: now)
        try await record.create(on: database)
        try await grant.record(.libraryChanged, target: "template:\(try record.requireID())")
    }

    func removeTemplate(_ id: UUID, in grant: StudyGrant) async throws {
        try grant.require(.editLibrary)
        try await InterventionTemplateRecord.query(on: database).filter(\.$id == id).filter(
            \.$study.$id == grant.studyID
        )
        .delete()
        try await grant.record(.libraryChanged, target: "template:\(id):removed")
    }

    /// Adds a message in English, German or both to the pool; each participant receives it in their language.
    func addMessage(_ texts: [Language: String?], in grant: StudyGrant) async throws {
        try grant.require(.editLibrary)
        let record = StudyMessageRecord(studyID: grant.studyID, texts: try MessagePlan.validateMessage(texts), now: now)
        try await record.create(on: database)
        try await grant.record(.libraryChanged, target: "message:\(try record.requireID())")
    }

    func removeMessage(_ id: UUID, in grant: StudyGrant) async throws {
        try grant.require(.editLibrary)
        try await StudyMessageRecord.query(on: database).filter(\.$id == id).filter(\.$study.$id == grant.studyID)
            .delete()
        try await grant.record(.libraryChanged, target: "message:\(id):removed")
    }

    /// Sets the study's message plan, or removes it (nil); messages planned ahead that did not arrive yet go.
    func setPlan(_ plan: MessagePlan?, in grant: StudyGrant) async throws {
        try grant.require(.editLibrary)
        try plan?.validate()
        let studyID = grant.studyID
        try await database.atomically { database in
            try await MessagePlanRecord.query(on: database).filter(\.$study.$id == studyID).delete()
            try await InterventionRecord.query(on: database)
                .filter(\.$study.$id == studyID)
                .filter(\.$origin == InterventionOrigin.messagePlan)
                .filter(\.$deliverAt > now)
                .delete()
            if let plan {
                try await MessagePlanRecord(
                    studyID: studyID, definition: String(decoding: try JSONEncoder().encode(plan), as: UTF8.self),
                    now: now
                ).create(on: database)
            }
        }
        try await grant.record(.libraryChanged, target: plan == nil ? "message-plan:removed" : "message-plan")
    }

    func plan(of studyID: UUID) async throws -> MessagePlan? {
        guard let record = try await MessagePlanRecord.query(on: database).filter(\.$study.$id == studyID).first()
        else {
            return nil
        }
        return try JSONDecoder().decode(MessagePlan.self, from: Data(record.definition.utf8))
    }
}
