import Fluent
import Foundation
import InterludeCore

/// Plans each active participant's reinforcement messages for today and tomorrow: random moments inside the
/// study's window (or the participant's own number and window, where the study lets them choose), each with a message drawn from the pool, stored ahead and notified when they arrive. The
/// occurrence key makes planning twice, or in two processes, add nothing twice.
struct MessagePlanner: Sendable {
    let database: any Database
    let services: AppServices

    func run(now: Date) async throws -> Int {
        let running = Dictionary(
            uniqueKeysWithValues: try await StudyRecord.query(on: database)
                .filter(\.$status == StudyStatus.running).all().map { ($0.id!, $0) })
        let plans = try await MessagePlanRecord.query(on: database).filter(\.$study.$id ~~ Array(running.keys)).all()
        var created = 0
        for record in plans {
            let studyID = record.$study.id
            guard let study = running[studyID] else { continue }
            let plan = try JSONDecoder().decode(MessagePlan.self, from: Data(record.definition.utf8))
            let pool = try await StudyMessageRecord.query(on: database).filter(\.$study.$id == studyID).sort(
                \.$createdAt
            ).all()
            guard !pool.isEmpty else { continue }
            let enrollments = try await EnrollmentRecord.query(on: database)
                .filter(\.$study.$id == studyID).filter(\.$status == EnrollmentStatus.active).filter(\.$pausedAt == nil)
                .with(\.$patient).all()
            let choices =
                plan.personChooses
                ? try await MessageChoiceService(database: database, services: services)
                    .choices(of: enrollments.map(\.$patient.id), in: studyID) : [:]
            // A control arm's participants receive no messages.
            for enrollment in enrollments where StudyArms.receivesInterventions(enrollment, in: study) {
                created += try await deliveries(
                    of: choices[enrollment.$patient.id]?[studyID] ?? plan, pool: pool, for: enrollment.patient,
                    studyID: studyID,
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
