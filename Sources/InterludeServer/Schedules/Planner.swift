import Fluent
import FluentPostgresDriver
import Foundation
import InterludeCore

/// Turns plans into prompts: materialises every active enrolment's openings for the next days, re-plans future
/// prompts nobody has opened when plans, appointments, adjustments or time zones change, and marks closed ones
/// expired. Running it twice, or in two processes at once, creates nothing twice.
package struct Planner: Sendable {
    let database: any Database
    let services: AppServices

    package init(database: any Database, services: AppServices) {
        self.database = database
        self.services = services
    }
    private var horizonDays: Int { services.settings.plannerHorizonDays }
    /// The first half of the Postgres advisory lock for whole runs, so only one process plans at a time; the second
    /// half is the schema's hash.
    static let lockClass: Int32 = 0x1A7E_4C0D
    /// Rows per INSERT: 12 columns each, well inside SQLite's limit on bound values.
    static let insertBatch = 500

    package struct Report: Sendable, Equatable {
        package var created = 0
        var updated = 0
        var removed = 0
        var expired = 0

        package init(created: Int = 0, updated: Int = 0, removed: Int = 0, expired: Int = 0) {
            self.created = created
            self.updated = updated
            self.removed = removed
            self.expired = expired
        }
    }

    /// A whole run over every enrolment; on PostgreSQL skipped while another process holds the planner lock.
    package func runAll(now: Date) async throws -> Report {
        guard Statements.isPostgres(database) else {
            return try await plan(now: now, patients: nil, on: database)
        }
        return try await database.atomically { transaction in
            guard try await Self.tryLock(on: transaction) else { return Report() }
            return try await plan(now: now, patients: nil, on: transaction)
        }
    }

    /// Takes the planner's lock for the running transaction unless another process holds it. The lock belongs to
    /// the schema, so installations (and test runs) in other schemas of the same database never wait for each other.
    static func tryLock(on transaction: any Database) async throws -> Bool {
        try await Statements.tryAdvisoryLock(lockClass, on: transaction)
    }

    /// Re-plans some patients at once, after something about them changed.
    func run(now: Date, patients: Set<UUID>) async throws -> Report {
        try await plan(now: now, patients: patients, on: database)
    }

    private func plan(now: Date, patients: Set<UUID>?, on database: any Database) async throws -> Report {
        var report = Report()
        report.expired = try await expire(now: now, patients: patients, on: database)
        let running = try await StudyRecord.query(on: database)
            .filter(\.$status == StudyStatus.running).all().compactMap(\.id)
        let plans = try await PlanRecord.query(on: database).filter(\.$study.$id ~~ running).filter(
            \.$deactivatedAt == nil
        ).all()
        var enrollmentQuery = EnrollmentRecord.query(on: database)
            .filter(\.$status == EnrollmentStatus.active)
            .filter(\.$pausedAt == nil)
            .filter(\.$study.$id ~~ Array(Set(plans.map { $0.$study.id })))
        if let patients { enrollmentQuery = enrollmentQuery.filter(\.$patient.$id ~~ Array(patients)) }
        let enrollments = plans.isEmpty ? [] : try await enrollmentQuery.all()
        let decoded = try plans.map {
            ($0, try JSONDecoder().decode(SchedulePlan.self, from: Data($0.definition.utf8)))
        }
        let byPatient = Dictionary(grouping: enrollments, by: { $0.$patient.id })
        // Patients who left, whose study closed or whose plan went still hold future prompts to take back.
        var waitingQuery = PromptRecord.query(on: database)
            .filter(\.$planID != nil)
            .filter(\.$status == PromptStatus.scheduled)
            .filter(\.$opensAt > now)
        if let patients { waitingQuery = waitingQuery.filter(\.$patient.$id ~~ Array(patients)) }
        let waiting = try await waitingQuery.field(\.$patient.$id).unique().all().map { $0.$patient.id }
        let patientIDs = Set(byPatient.keys).union(waiting)
        let ordered = patientIDs.sorted { $0.uuidString < $1.uuidString }
        for batch in ordered.batches() {
            let part = try await planChunk(
                Array(batch), enrollments: byPatient, plans: decoded,
                now: now, on: database)
            report.created += part.created
            report.updated += part.updated
            report.removed += part.removed
        }
        return report
    }

    /// Marks prompts whose window closed without an answer as expired.
    private func expire(now: Date, patients: Set<UUID>?, on database: any Database) async throws -> Int {
        var query = PromptRecord.query(on: database)
            .filter(\.$status ~~ [PromptStatus.scheduled, PromptStatus.open])
            .filter(\.$closesAt <= now)
        if let patients { query = query.filter(\.$patient.$id ~~ Array(patients)) }
        let count = try await query.count()
        if count > 0 {
            try await query.set(\.$status, to: PromptStatus.expired).set(\.$changedAt, to: now).update()
        }
        return count
    }

    private func planChunk(
        _ patientIDs: [UUID], enrollments: [UUID: [EnrollmentRecord]], plans: [(PlanRecord, SchedulePlan)], now: Date,
        on database: any Database
    ) async throws -> Report {
        let users = try await UserRecord.query(on: database).filter(\.$id ~~ patientIDs).all()
        let profiles = try await PatientProfileRecord.query(on: database).filter(\.$user.$id ~~ patientIDs).all()
        let appointments = try await AppointmentRecord.query(on: database)
            .filter(\.$patient.$id ~~ patientIDs)
            .filter(\.$startsAt > now.addingTimeInterval(-86_400))
            .all()
        let adjustments = try await PlanAdjustmentRecord.query(on: database).filter(\.$patient.$id ~~ patientIDs).all()
        let existing = try await PromptRecord.query(on: database)
            .filter(\.$patient.$id ~~ patientIDs)
            .filter(\.$planID != nil)
            .filter(\.$closesAt > now)
            .all()
        let userByID = Dictionary(uniqueKeysWithValues: users.map { ($0.id!, $0) })
        let therapyDates = Dictionary(
            uniqueKeysWithValues: profiles.map {
                (
                    $0.$user.id,
                    (start: $0.therapyStart.flatMap(LocalDate.init), end: $0.therapyEnd.flatMap(LocalDate.init))
                )
            })
        let appointmentsByPatient = Dictionary(grouping: appointments, by: { $0.$patient.id })
        var adjustmentByKey: [String: PlanAdjustment] = [:]
        for adjustment in adjustments {
            adjustmentByKey["\(adjustment.$patient.id)|\(adjustment.$plan.id)"] =
                try? JSONDecoder().decode(PlanAdjustment.self, from: Data(adjustment.adjustment.utf8))
        }
        var existingByKey: [String: PromptRecord] = [:]
        for prompt in existing {
            existingByKey["\(prompt.$patient.id)|\(prompt.planID!)|\(prompt.occurrence ?? "")"] = prompt
        }

        var moved: [PromptRecord] = []
        var inserts: [NewPrompt] = []
        var wanted: Set<String> = []
        let horizonEnd = now.addingTimeInterval(TimeInterval(horizonDays * 86_400))
        for patientID in patientIDs {
            guard let user = userByID[patientID] else { continue }
            let zone = TimeZone(identifier: user.timeZone) ?? .gmt
            let today = LocalDate(now, in: zone)
            let slots = (appointmentsByPatient[patientID] ?? []).map {
                AppointmentSlot(id: $0.id!, startsAt: $0.startsAt, endsAt: $0.endsAt)
            }
            for enrollment in enrollments[patientID] ?? [] {
                for (record, plan) in plans where Self.applies(record, to: enrollment) {
                    let planID = record.id!
                    let context = ScheduleContext(
                        participantID: patientID, planID: planID, timeZone: zone, enrolledAt: enrollment.createdAt,
                        planCreatedAt: record.createdAt, therapyStart: therapyDates[patientID]?.start,
                        therapyEnd: therapyDates[patientID]?.end, appointments: slots,
                        adjustment: adjustmentByKey["\(patientID)|\(planID)"])
                    let occurrences = plan.occurrences(
                        from: today.adding(days: -1), through: today.adding(days: horizonDays), context: context
                    ).filter { $0.closesAt > now && $0.opensAt < horizonEnd }
                    for occurrence in occurrences {
                        let key = "\(patientID)|\(planID)|\(occurrence.key)"
                        wanted.insert(key)
                        if let prompt = existingByKey[key] {
                            if Self.replannable(prompt, now: now),
                                prompt.opensAt != occurrence.opensAt || prompt.closesAt != occurrence.closesAt
                            {
                                prompt.opensAt = occurrence.opensAt
                                prompt.closesAt = occurrence.closesAt
                                moved.append(prompt)
                            }
                        } else {
                            inserts.append(
                                NewPrompt(
                                    patientID: patientID, studyID: enrollment.$study.id,
                                    instrumentKey: record.instrumentKey,
                                    opensAt: occurrence.opensAt, closesAt: occurrence.closesAt, planID: planID,
                                    occurrence: occurrence.key))
                        }
                    }
                }
            }
        }
        // Future prompts nobody opened whose occurrence the plans no longer produce.
        let stale = existingByKey.filter { key, prompt in
            !wanted.contains(key) && Self.replannable(prompt, now: now) && prompt.opensAt < horizonEnd
        }.values.map { (id: $0.id!, patientID: $0.$patient.id) }
        let versions = try await pinnedVersions(of: inserts, on: database)
        // The chunk's changes in one transaction: one commit, each changed page written once.
        return try await database.atomically { [moved, inserts] database in
            var report = Report(updated: moved.count, removed: stale.count)
            for prompt in moved { try await prompt.save(on: database) }
            if !stale.isEmpty {
                try await PromptRecord.query(on: database).filter(\.$id ~~ stale.map(\.id)).delete()
                for (patientID, prompts) in Dictionary(grouping: stale, by: \.patientID) {
                    try await SyncStamps.bury(.prompt, ids: prompts.map(\.id), of: patientID, now: now, on: database)
                }
            }
            report.created = try await insert(inserts, versions: versions, now: now, on: database)
            return report
        }
    }

    /// Whether a plan is meant for this enrolment: same study, and for everyone, this arm, or this patient.
    static func applies(_ plan: PlanRecord, to enrollment: EnrollmentRecord) -> Bool {
        guard plan.$study.id == enrollment.$study.id else { return false }
        if let patient = plan.$patient.id, patient != enrollment.$patient.id { return false }
        if let arm = plan.arm, arm != enrollment.arm { return false }
        return true
    }

    /// Only prompts that have not opened yet and nobody looked at may move or go.
    static func replannable(_ prompt: PromptRecord, now: Date) -> Bool {
        prompt.opensAt > now && prompt.openedAt == nil && prompt.status == PromptStatus.scheduled
    }

    /// The version of its instrument each study pins, for the instruments of `prompts`.
    private func pinnedVersions(of prompts: [NewPrompt], on database: any Database) async throws -> [StudyInstrument:
        Int]
    {
        let catalog = InstrumentCatalog(database: database, services: services)
        var versions: [StudyInstrument: Int] = [:]
        for used in Set(prompts.map(StudyInstrument.init)) {
            versions[used] = try await catalog.pinnedVersion(used.key, for: used.studyID)?.version
        }
        return versions
    }

    /// Inserts new prompts with the version of the instrument their study uses, skipping any another run already
    /// made.
    private func insert(
        _ prompts: [NewPrompt], versions: [StudyInstrument: Int], now: Date, on database: any Database
    ) async throws -> Int {
        guard !prompts.isEmpty else { return 0 }
        let ready = prompts.compactMap { prompt in versions[StudyInstrument(prompt)].map { (prompt, $0) } }
        var inserted = 0
        for batch in ready.batches(of: Self.insertBatch) {
            inserted += try await Statements.insertScheduledPrompts(
                batch.map { prompt, version in
                    Statements.ScheduledPrompt(
                        patientID: prompt.patientID, studyID: prompt.studyID, instrumentKey: prompt.instrumentKey,
                        instrumentVersion: version, opensAt: prompt.opensAt, closesAt: prompt.closesAt,
                        planID: prompt.planID, occurrence: prompt.occurrence)
                }, at: now, on: database)
        }
        return inserted
    }
}

/// A prompt a plan wants that does not exist yet.
private struct NewPrompt: Sendable {
    let patientID: UUID
    let studyID: UUID
    let instrumentKey: String
    let opensAt: Date
    let closesAt: Date
    let planID: UUID
    let occurrence: String
}

/// An instrument as one study uses it: each study has its own pinned version.
private struct StudyInstrument: Hashable, Sendable {
    let studyID: UUID?
    let key: String

    init(_ prompt: NewPrompt) {
        studyID = prompt.studyID
        key = prompt.instrumentKey
    }
}
