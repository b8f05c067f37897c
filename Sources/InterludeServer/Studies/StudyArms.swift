import Fluent
import Foundation
import InterludeCore

/// The arms of a study, stored as a JSON list of names, and the design that allocates participants to them.
enum StudyArms {
    static func names(of study: StudyRecord) -> [String] {
        study.arms.flatMap { try? JSONDecoder().decode([String].self, from: Data($0.utf8)) } ?? []
    }

    /// The study's stored design; nil before its first one.
    static func design(of study: StudyRecord) -> AllocationDesign? {
        study.allocationDesign.isEmpty
            ? nil : try? JSONDecoder().decode(AllocationDesign.self, from: Data(study.allocationDesign.utf8))
    }

    /// Whether the participant of this enrolment receives interventions, rules' actions and messages in the study:
    /// everyone but the participants of a control arm.
    static func receivesInterventions(_ enrollment: EnrollmentRecord, in study: StudyRecord) -> Bool {
        guard enrollment.arm != nil, let design = design(of: study) else { return true }
        return !design.isControl(enrollment.arm)
    }

    /// Sets the study's arms and how participants join them (checked before, as a `StudyDraft`). The seed of the
    /// study's random choices stays what it was, so a changed design goes on drawing from the same sequence; a
    /// study's first design gets a new one.
    static func set(
        _ arms: [String], allocation: ArmAllocation, settings: AllocationSettings, today: LocalDate,
        on study: StudyRecord
    ) throws {
        study.arms = arms.isEmpty ? nil : String(decoding: try JSONEncoder().encode(arms), as: UTF8.self)
        study.allocation = arms.isEmpty ? nil : allocation
        guard !arms.isEmpty else { return }
        let seed = design(of: study)?.seed ?? UInt64.random(in: .min ... .max)
        let made = settings.design(arms: arms, allocation: allocation, seed: seed, today: today).design
        study.allocationDesign = String(decoding: try JSONEncoder().encode(made), as: UTF8.self)
    }
}

/// Allocates participants as their study's design says, and keeps the log of every allocation.
struct StudyAllocations: Sendable {
    let database: any Database
    let services: AppServices

    /// One entry of the log with the participant's pseudonym (nil once their data in the study was erased).
    struct Listed: Sendable {
        let record: AllocationRecord
        let pseudonym: String?
    }

    /// Allocates a joining participant inside the join's transaction: the next entry of the study's log, from the
    /// design and the log so far. Nil for a study without arms; a study whose every arm is full is a conflict.
    func allocate(_ patientID: UUID, zone: TimeZone, joining study: StudyRecord, now: Date) async throws -> String? {
        guard !StudyArms.names(of: study).isEmpty, let (design, log) = try await designAndLog(of: study) else {
            return nil
        }
        let today = LocalDate(now, in: zone)
        let profile = try await PatientProfileRecord.query(on: database).filter(\.$user.$id == patientID).first()
        var levels: [String: String] = [:]
        for factor in design.factors.compactMap(AllocationFactor.init(rawValue:)) {
            levels[factor.rawValue] = factor.level(
                gender: profile?.gender, dateOfBirth: profile?.dateOfBirth.flatMap(LocalDate.init), on: today)
        }
        // The site admitting a participant is their practice: cycles of admissions are counted per practice. Who
        // joins without one is admitted by the study itself; a practice comparing arms admits its own patients.
        let practice =
            StudyKind(joinMode: study.joinMode) == .practice
            ? try study.requireID()
            : try await Caseloads(database: database).practiceEnrollment(of: patientID)?.$study.id
        let candidate = AllocationCandidate(
            participant: patientID.lowercasedText, levels: levels, site: practice?.lowercasedText ?? "",
            admittedOn: today)
        guard case .allocated(let entry) = design.allocate(candidate, after: log) else {
            throw AppError.conflict(.studyFull)
        }
        try await AllocationRecord(
            entry, studyID: try study.requireID(), participantID: patientID, recordedBy: nil, reason: nil, now: now
        ).create(on: database)
        return entry.arm
    }

    /// The study's log with the seed, for its researchers once the study is closed; while it runs, they would tell
    /// the allocations to come.
    func list(in grant: StudyGrant) async throws -> (seed: UInt64, entries: [Listed]) {
        try grant.require(.exportData)
        guard grant.study.status == .closed else { throw AppError.conflict(.studyRunning) }
        // A study that never had arms has no design, no seed and no log.
        guard let design = StudyArms.design(of: grant.study) else { throw AppError.notFound }
        let records = try await AllocationRecord.query(on: database).filter(\.$study.$id == grant.studyID)
            .sort(\.$sequence).all()
        let pseudonyms = try await pseudonyms(of: records.map(\.participantID))
        try await grant.record(.allocationsRead)
        return (
            design.seed,
            records.map { Listed(record: $0, pseudonym: pseudonyms[$0.participantID]) }
        )
    }

    /// Corrects a participant's arm: a new, audited entry of the log with the reason; the plans of the new arm
    /// reach them from now on.
    func correct(in grant: StudyGrant, enrollmentID: UUID?, arm: String?, reason: String?) async throws -> Listed {
        try grant.require(.editStudy)
        guard let enrollmentID, let enrollment = try await EnrollmentRecord.find(enrollmentID, on: database),
            enrollment.$study.id == grant.studyID, enrollment.arm != nil
        else { throw AppError.field("enrollmentId", .unknown) }
        let correction = try AllocationCorrection.validate(
            arm: arm, reason: reason, arms: StudyArms.names(of: grant.study), current: enrollment.arm)
        let patientID = enrollment.$patient.id
        let (viewerID, now) = (try grant.viewer.requireID(), services.clock.now)
        let record = try await database.atomically { database in
            let allocations = StudyAllocations(database: database, services: services)
            guard let (design, log) = try await allocations.designAndLog(of: grant.study) else {
                throw AppError.field("arm", .unknown)
            }
            let entry = design.correction(of: patientID.lowercasedText, to: correction.arm, after: log)
            let record = AllocationRecord(
                entry, studyID: grant.studyID, participantID: patientID, recordedBy: viewerID,
                reason: correction.reason, now: now)
            try await record.create(on: database)
            enrollment.arm = correction.arm
            try await enrollment.save(on: database)
            try await grant.record(
                .allocationCorrected, patients: [patientID], target: "allocation:\(entry.sequence)", on: database)
            return record
        }
        _ = try await Planner(database: database, services: services).run(now: now, patients: [patientID])
        return Listed(record: record, pseudonym: try await pseudonyms(of: [patientID])[patientID])
    }

    /// The study's design and its log so far, in a transaction that then adds to the log. Allocations at once wait
    /// for each other at the study's row (PostgreSQL; SQLite writes one at a time), and the log's unique places
    /// refuse a second entry at the same place should one get through. Nil for a study without arms.
    private func designAndLog(of given: StudyRecord) async throws -> (AllocationDesign, [AllocationEntry])? {
        let studyID = try given.requireID()
        if Statements.isPostgres(database) { try await Statements.lockStudy(studyID, on: database) }
        // Read again under the lock: an allocation before this one may have stored the design.
        let study = try await StudyRecord.find(studyID, on: database) ?? given
        let arms = StudyArms.names(of: study)
        guard !arms.isEmpty else { return nil }
        if StudyArms.design(of: study) == nil {
            // Studies given arms before designs were stored get theirs, with a new seed, at the first join after.
            try StudyArms.set(
                arms, allocation: study.allocation ?? .alternating, settings: AllocationSettings(),
                today: LocalDate(services.clock.now, in: .gmt), on: study)
            try await study.save(on: database)
        }
        guard let design = StudyArms.design(of: study) else { return nil }
        return (design, try await log(of: studyID))
    }

    /// The study's log, in order.
    func log(of studyID: UUID) async throws -> [AllocationEntry] {
        try await AllocationRecord.query(on: database).filter(\.$study.$id == studyID).sort(\.$sequence).all()
            .map(\.entry)
    }

    private func pseudonyms(of patients: [UUID]) async throws -> [UUID: String] {
        guard !patients.isEmpty else { return [:] }
        let profiles = try await PatientProfileRecord.query(on: database).filter(\.$user.$id ~~ Set(patients)).all()
        return Dictionary(profiles.map { ($0.$user.id, $0.pseudonym) }, uniquingKeysWith: { first, _ in first })
    }
}
