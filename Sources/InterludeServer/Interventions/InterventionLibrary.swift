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
        try await InterventionTemplateRecord.query(on: database).filter(\.$id == id).filter(\.$study.$id == grant.studyID)
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
        try await StudyMessageRecord.query(on: database).filter(\.$id == id).filter(\.$study.$id == grant.studyID).delete()
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
                    studyID: studyID, definition: String(decoding: try JSONEncoder().encode(plan), as: UTF8.self), now: now
                ).create(on: database)
            }
        }
        try await grant.record(.libraryChanged, target: plan == nil ? "message-plan:removed" : "message-plan")
    }

    func plan(of studyID: UUID) async throws -> MessagePlan? {
        guard let record = try await MessagePlanRecord.query(on: database).filter(\.$study.$id == studyID).first() else {
            return nil
        }
        return try JSONDecoder().decode(MessagePlan.self, from: Data(record.definition.utf8))
    }
}

/// Plans each active participant's reinforcement messages for today and tomorrow: random moments inside the
/// study's window (or the participant's own number and window, where the study lets them choose), each with a message drawn from the pool, stored ahead and notified when they arrive. The
/// occurrence key makes planning twice, or in two processes, add nothing twice.
struct MessagePlanner: Sendable {
    let database: any Database
    let services: AppServices

    func run(now: Date) async throws -> Int {
        let running = try await StudyRecord.query(on: database)
            .filter(\.$status == StudyStatus.running).all().compactMap(\.id)
        let plans = try await MessagePlanRecord.query(on: database).filter(\.$study.$id ~~ running).all()
        var created = 0
        for record in plans {
            let studyID = record.$study.id
            let plan = try JSONDecoder().decode(MessagePlan.self, from: Data(record.definition.utf8))
            let pool = try await StudyMessageRecord.query(on: database).filter(\.$study.$id == studyID).sort(\.$createdAt).all()
            guard !pool.isEmpty else { continue }
            let enrollments = try await EnrollmentRecord.query(on: database)
                .filter(\.$study.$id == studyID).filter(\.$status == EnrollmentStatus.active).filter(\.$pausedAt == nil)
                .with(\.$patient).all()
            let choices = plan.personChooses
                ? try await MessageChoiceService(database: database, services: services)
                    .choices(of: enrollments.map(\.$patient.id), in: studyID) : [:]
            for enrollment in enrollments {
                created += try await deliveries(
                    of: choices[enrollment.$patient.id]?[studyID] ?? plan, pool: pool, for: enrollment.patient, studyID: studyID,
                    since: enrollment.createdAt, now: now)
            }
        }
        return created
    }

    private func deliveries(
        of plan: MessagePlan, pool: [StudyMessageRecord], for patient: UserRecord, studyID: UUID, since: Date, now: Date
    ) async throws -> Int {
        let patientID = try patient.requireID()
        let zone = patient.zone
        let today = LocalDate(now, in: zone)
        var records: [InterventionRecord] = []
        for date in [today, today.adding(days: 1)] {
            for moment in plan.moments(on: date, seed: "\(patientID)|\(studyID)") {
                let deliverAt = LocalDateTime(date: date, time: moment).instant(in: zone)
                guard deliverAt > now, deliverAt > since else { continue }
                let occurrence = "\(patientID)|\(studyID)|\(date)|\(moment)"
                let message = pool[MessagePlan.pick(from: pool.count, seed: occurrence)]
                let record = InterventionRecord(
                    patientID: patientID, studyID: studyID, senderID: nil, origin: .messagePlan,
                    kind: .message, sealedText: try services.cipher.seal(message.texts.text(patient.language)),
                    deliverAt: deliverAt, now: now)
                record.occurrence = occurrence
                records.append(record)
            }
        }
        let known = Set(
            try await InterventionRecord.query(on: database).filter(\.$occurrence ~~ records.compactMap(\.occurrence))
                .all().compactMap(\.occurrence))
        var added = 0
        for record in records where !known.contains(record.occurrence ?? "") {
            do {
                try await database.atomically { transaction in
                    try await record.create(on: transaction)
                    try await InterventionService(database: transaction, services: services).notify(about: [record])
                }
                added += 1
            } catch let error as any DatabaseError where error.isConstraintFailure {
                // Another process planned the same moment.
                continue
            }
        }
        return added
    }
}
