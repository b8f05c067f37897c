import Fluent
import Foundation
import InterludeCore

/// A participant's own choice of a study's reinforcement messages: how many a day (none up to the study's number)
/// and in which window inside the study's, where the study lets them choose. A change withdraws the messages
/// planned ahead that did not arrive yet, so the next planning follows it.
struct MessageChoiceService: Sendable {
    let database: any Database
    let services: AppServices

    private var now: Date { services.clock.now }

    /// A study the person takes part in that sends reinforcement messages, its plan, and their choice if any.
    struct Offer: Sendable {
        let study: StudyRecord
        let plan: MessagePlan
        let choice: MessagePlan?

        /// What reaches the person: their choice where the study lets them choose, else the study's plan.
        var effective: MessagePlan { plan.personChooses ? choice ?? plan : plan }
    }

    /// The studies with a message plan the person takes part in, oldest enrolment first.
    func offers(for patientID: UUID) async throws -> [Offer] {
        let enrollments = try await EnrollmentRecord.query(on: database).filter(\.$patient.$id == patientID)
            .filter(\.$status == EnrollmentStatus.active).sort(\.$createdAt).with(\.$study).all()
        let library = InterventionLibrary(database: database, services: services)
        let choices = try await self.choices(of: [patientID])
        var offers: [Offer] = []
        for enrollment in enrollments {
            guard let plan = try await library.plan(of: enrollment.$study.id) else { continue }
            offers.append(Offer(study: enrollment.study, plan: plan, choice: choices[patientID]?[enrollment.$study.id]))
        }
        return offers
    }

    /// Stores the person's choice for one of their studies; 422 naming the field outside the study's bounds, 403
    /// when the study does not let them choose, not found for a study they are not in or that sends no messages.
    func choose(perDay: Int, windowStart: String, windowEnd: String, in studyID: UUID, by patientID: UUID) async throws
        -> Offer
    {
        guard let offer = try await offers(for: patientID).first(where: { $0.study.id == studyID }) else {
            throw AppError.notFound
        }
        guard offer.plan.personChooses else { throw AppError.forbidden(.notAllowed) }
        var validator = FieldValidator()
        let start = LocalTime(windowStart)
        let end = LocalTime(windowEnd)
        if start == nil { validator.add("windowStart", .invalidFormat) }
        if end == nil { validator.add("windowEnd", .invalidFormat) }
        try validator.check()
        let chosen = try offer.plan.chosen(perDay: perDay, windowStart: start!, windowEnd: end!)
        let now = now
        try await database.atomically { database in
            let record =
                try await MessageChoiceRecord.query(on: database).filter(\.$patient.$id == patientID)
                .filter(\.$study.$id == studyID).first()
                ?? MessageChoiceRecord(patientID: patientID, studyID: studyID, now: now)
            record.perDay = chosen.perDay
            record.windowStart = chosen.windowStart.description
            record.windowEnd = chosen.windowEnd.description
            record.changedAt = now
            try await record.save(on: database)
            try await Self.withdrawPlanned(for: patientID, in: studyID, after: now, on: database)
        }
        return Offer(study: offer.study, plan: offer.plan, choice: chosen)
    }

    /// Goes back to the study's plan.
    func reset(in studyID: UUID, by patientID: UUID) async throws {
        guard try await offers(for: patientID).contains(where: { $0.study.id == studyID }) else {
            throw AppError.notFound
        }
        let now = now
        try await database.atomically { database in
            try await MessageChoiceRecord.query(on: database).filter(\.$patient.$id == patientID).filter(
                \.$study.$id == studyID
            ).delete()
            try await Self.withdrawPlanned(for: patientID, in: studyID, after: now, on: database)
        }
    }

    /// Each person's choice per study, read leniently: a stored choice that no longer reads is no choice.
    func choices(of patientIDs: [UUID], in studyID: UUID? = nil) async throws -> [UUID: [UUID: MessagePlan]] {
        var query = MessageChoiceRecord.query(on: database).filter(\.$patient.$id ~~ patientIDs)
        if let studyID { query = query.filter(\.$study.$id == studyID) }
        var choices: [UUID: [UUID: MessagePlan]] = [:]
        for record in try await query.all() {
            guard let start = LocalTime(record.windowStart), let end = LocalTime(record.windowEnd) else { continue }
            choices[record.$patient.id, default: [:]][record.$study.id] = MessagePlan(
                perDay: record.perDay, windowStart: start, windowEnd: end)
        }
        return choices
    }

    /// Drops the reinforcement messages planned ahead for the person in the study.
    static func withdrawPlanned(for patientID: UUID, in studyID: UUID, after now: Date, on database: any Database)
        async throws
    {
        try await InterventionRecord.query(on: database)
            .filter(\.$patient.$id == patientID).filter(\.$study.$id == studyID)
            .filter(\.$origin == InterventionOrigin.messagePlan).filter(\.$deliverAt > now)
            .delete()
    }
}
