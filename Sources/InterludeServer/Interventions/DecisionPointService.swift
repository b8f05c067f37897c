import Fluent
import Foundation
import InterludeCore

/// Micro-randomised decision points: a study's plan, and the job that decides each participant's points as they
/// come. Every point of a participant of an arm that receives interventions is logged once, available or not;
/// an assigned point delivers its option (a message, or a questionnaire to answer) when it is decided in time.
struct DecisionPointService: Sendable {
    let database: any Database
    let services: AppServices

    private var now: Date { services.clock.now }

    /// How late a point may be decided and still deliver: a server that was not running at the point decides it
    /// afterwards for the log, but a message hours late is not what was randomised.
    static let deliveryGrace: TimeInterval = 30 * 60
    /// How far back a point is still decided when the job comes to it late.
    static let lookBack: TimeInterval = 24 * 3600

    // MARK: The plan

    func plan(in grant: StudyGrant) async throws -> DecisionPointPlan? {
        try grant.require(.viewPlans)
        return try await record(of: grant.studyID).map(Self.decode)
    }

    /// Sets the study's plan, keeping the seed of an earlier one; points already logged stay as they were.
    func setPlan(_ plan: DecisionPointPlan, in grant: StudyGrant) async throws {
        try grant.require(.editPlans)
        let problems = plan.problems()
        guard problems.isEmpty else { throw AppError.validation(problems) }
        let prompts = plan.options.compactMap { option -> String? in
            if case .prompt(let key, _) = option { key } else { nil }
        }
        let catalog = InstrumentCatalog(database: database, services: services)
        for (index, key) in prompts.enumerated() where try await catalog.pinnedVersion(key, for: grant.studyID) == nil {
            throw AppError.field("options.\(index).instrumentKey", .unknown)
        }
        let definition = String(decoding: try JSONEncoder().encode(plan), as: UTF8.self)
        if let stored = try await record(of: grant.studyID) {
            stored.definition = definition
            stored.updatedAt = now
            try await stored.save(on: database)
        } else {
            try await DecisionPlanRecord(
                studyID: grant.studyID, definition: definition, seed: UInt64.random(in: .min ... .max), now: now
            ).create(on: database)
        }
        try await grant.record(.planChanged, target: "decision-plan")
    }

    func removePlan(in grant: StudyGrant) async throws {
        try grant.require(.editPlans)
        guard let stored = try await record(of: grant.studyID) else { throw AppError.notFound }
        try await stored.delete(on: database)
        try await grant.record(.planChanged, target: "decision-plan:removed")
    }

    private func record(of studyID: UUID) async throws -> DecisionPlanRecord? {
        try await DecisionPlanRecord.query(on: database).filter(\.$study.$id == studyID).first()
    }

    static func decode(_ record: DecisionPlanRecord) throws -> DecisionPointPlan {
        try JSONDecoder().decode(DecisionPointPlan.self, from: Data(record.definition.utf8))
    }

    // MARK: Deciding

    /// Decides every point reached since the last run, for every running study with a plan; answers how many
    /// points it logged.
    func run() async throws -> Int {
        let plans = try await DecisionPlanRecord.query(on: database).with(\.$study).all()
        var logged = 0
        for record in plans where record.study.status == .running {
            logged += try await decide(Self.decode(record), seed: UInt64(bitPattern: record.seed), in: record.study)
        }
        return logged
    }

    private func decide(_ plan: DecisionPointPlan, seed: UInt64, in study: StudyRecord) async throws -> Int {
        let studyID = try study.requireID()
        let enrollments = try await EnrollmentRecord.query(on: database)
            .filter(\.$study.$id == studyID).filter(\.$status == EnrollmentStatus.active).filter(\.$pausedAt == nil)
            .with(\.$patient).all()
            .filter { StudyArms.receivesInterventions($0, in: study) && $0.patient.deletedAt == nil }
        guard !enrollments.isEmpty else { return 0 }
        let patientIDs = enrollments.map(\.$patient.id)
        let since = now.addingTimeInterval(-Self.lookBack)
        var known: Set<String> = []
        for point in try await DecisionPointRecord.query(on: database).filter(\.$study.$id == studyID)
            .filter(\.$patient.$id ~~ patientIDs).filter(\.$at >= since).all()
        {
            known.insert("\(point.$patient.id) \(point.point)")
        }
        let preferences = try await DeviceService(database: database, services: services).preferences(of: patientIDs)
        let answers = try await recentAnswers(of: patientIDs, for: plan, since: since)
        var logged = 0
        var quiet: [DecisionPointRecord] = []
        for enrollment in enrollments {
            let patient = enrollment.patient
            let patientID = try patient.requireID()
            let zone = patient.zone
            let today = LocalDate(now, in: zone)
            for day in [today.adding(days: -1), today] {
                for point in plan.points(on: day, in: zone)
                where point.at <= now && point.at > since && point.at >= enrollment.createdAt
                    && !known.contains("\(patientID) \(point.key)")
                {
                    let decision = plan.decide(
                        point, participant: patientID, seed: seed, zone: zone,
                        quietHours: preferences[patientID]?.quietHours, answers: answers[patientID] ?? [])
                    let record = record(of: decision, for: patientID, zone: patient.timeZone, in: studyID)
                    if let option = decision.option.map({ plan.options[$0] }),
                        now.timeIntervalSince(decision.at) <= Self.deliveryGrace
                    {
                        if try await log(record, delivering: option, to: patient) { logged += 1 }
                    } else {
                        quiet.append(record)
                    }
                }
            }
        }
        return logged + (try await log(quiet))
    }

    private func record(of decision: DecisionPoint, for patientID: UUID, zone: String, in studyID: UUID)
        -> DecisionPointRecord
    {
        let record = DecisionPointRecord()
        record.createdAt = now
        record.$study.id = studyID
        record.$patient.id = patientID
        record.point = decision.key
        record.at = decision.at
        record.timeZone = zone
        record.available = decision.available
        record.probability = decision.probability
        record.assigned = decision.assigned
        record.option = decision.option
        record.outcomeEnds = decision.outcomeEnds
        return record
    }

    /// Logs a point and delivers its option, together; false when another process logged it first.
    private func log(_ record: DecisionPointRecord, delivering option: DecisionOption, to patient: UserRecord)
        async throws -> Bool
    {
        do {
            try await database.atomically { transaction in
                try await deliver(option, to: patient, for: record, on: transaction)
                try await record.create(on: transaction)
            }
            return true
        } catch let error as any DatabaseError where error.isConstraintFailure {
            return false
        }
    }

    /// Logs points that deliver nothing, many at once; one by one when another process logged one of them first.
    private func log(_ records: [DecisionPointRecord]) async throws -> Int {
        var logged = 0
        for start in stride(from: 0, to: records.count, by: Self.batch) {
            let batch = Array(records[start..<min(start + Self.batch, records.count)])
            do {
                try await batch.create(on: database)
                logged += batch.count
            } catch let error as any DatabaseError where error.isConstraintFailure {
                for record in batch {
                    do {
                        try await record.create(on: database)
                        logged += 1
                    } catch let error as any DatabaseError where error.isConstraintFailure {
                        continue
                    }
                }
            }
        }
        return logged
    }

    /// Points inserted by one statement: 500 rows of 14 columns stay far below every database's limit of values.
    private static let batch = 500

    private func deliver(
        _ option: DecisionOption, to patient: UserRecord, for record: DecisionPointRecord, on transaction: any Database
    ) async throws {
        let patientID = try patient.requireID()
        let studyID = record.$study.id
        switch option {
        case .message(let texts):
            let message = InterventionRecord(
                patientID: patientID, studyID: studyID, senderID: nil, origin: .messagePlan, kind: .message,
                sealedText: try services.cipher.seal(texts.text(patient.language)), deliverAt: now, now: now)
            message.occurrence = "decision|\(studyID)|\(patientID)|\(record.point)"
            try await message.create(on: transaction)
            try await InterventionService(database: transaction, services: services).notify(about: [message])
            record.interventionID = message.id
        case .prompt(let instrumentKey, let openMinutes):
            let prompt = try await PromptService(database: transaction, services: services).create(
                patientID: patientID, studyID: studyID, assignedBy: nil, instrumentKey: instrumentKey, opensAt: now,
                closesAt: now.addingTimeInterval(Double(openMinutes) * 60), source: .decisionPoint)
            record.promptID = prompt.id
        }
    }

    /// The answers the plan's conditions look at, of each participant, given since `since` less the longest look
    /// back of a condition.
    private func recentAnswers(of patientIDs: [UUID], for plan: DecisionPointPlan, since: Date) async throws
        -> [UUID: [RecentAnswer]]
    {
        let conditions = [plan.availability.recent, plan.probability.recent].compactMap { $0 }
        guard !conditions.isEmpty else { return [:] }
        let longest = Double(conditions.map(\.withinHours).max() ?? 0) * 3600
        let records = try await ResponseRecord.query(on: database).filter(\.$patient.$id ~~ patientIDs)
            .filter(\.$instrumentKey ~~ Array(Set(conditions.map(\.instrumentKey))))
            .filter(\.$completedAt > since.addingTimeInterval(-longest)).all()
        return try await Self.answers(records, database: database, services: services)
    }

    /// Responses as decision points and their outcomes see them, per participant.
    static func answers(_ records: [ResponseRecord], database: any Database, services: AppServices) async throws
        -> [UUID: [RecentAnswer]]
    {
        let definitions = try await InstrumentCatalog(database: database, services: services).definitions(
            Set(records.map { InstrumentVersionKey(key: $0.instrumentKey, version: $0.instrumentVersion) }))
        let responses = ResponseService(database: database, services: services)
        var answers: [UUID: [RecentAnswer]] = [:]
        for record in records {
            guard
                let definition = definitions[
                    InstrumentVersionKey(key: record.instrumentKey, version: record.instrumentVersion)]
            else { continue }
            let stored = try responses.open(record)
            answers[record.$patient.id, default: []].append(
                RecentAnswer(
                    completedAt: record.completedAt,
                    facts: ResponseFacts(definition: definition, answers: stored.answers, scores: stored.scores)))
        }
        return answers
    }
}
