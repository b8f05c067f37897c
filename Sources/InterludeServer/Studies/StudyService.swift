import Fluent
import Foundation
import InterludeCore
import SQLKit
import Vapor

/// Studies: researchers create and run them, patients join and leave them.
struct StudyService: Sendable {
    let database: any Database
    let services: AppServices

    private var now: Date { services.clock.now }

    // MARK: Patients

    /// A study together with the caller's current enrolment in it, if any.
    struct StudyWithEnrollment: Sendable {
        let study: StudyRecord
        let enrollment: EnrollmentRecord?
    }

    /// Running studies a patient can join, and every study they belong to or wait for.
    func studies(forPatient patientID: UUID) async throws -> [StudyWithEnrollment] {
        let enrollments = try await EnrollmentRecord.query(on: database)
            .filter(\.$patient.$id == patientID)
            .filter(\.$status ~~ [EnrollmentStatus.active, EnrollmentStatus.requested])
            .all()
        let enrolledStudyIDs = Set(enrollments.map { $0.$study.id })
        let joinable = try await StudyRecord.query(on: database)
            .filter(\.$status == StudyStatus.running)
            .filter(\.$joinMode != JoinMode.pairingCode)
            .all()
        let enrolled =
            enrolledStudyIDs.isEmpty
            ? [] : try await StudyRecord.query(on: database).filter(\.$id ~~ Array(enrolledStudyIDs)).all()
        var seen = Set<UUID>()
        return (enrolled + joinable)
            .filter { seen.insert($0.id!).inserted }
            .sorted { $0.title.localizedStandardCompare($1.title) == .orderedAscending }
            .map { study in
                StudyWithEnrollment(study: study, enrollment: enrollments.first { $0.$study.id == study.id })
            }
    }

    /// A study as a patient may see it: joinable, or one they belong to.
    func study(_ studyID: UUID, forPatient patientID: UUID) async throws -> StudyWithEnrollment {
        guard let entry = try await studies(forPatient: patientID).first(where: { $0.study.id == studyID }) else {
            throw AppError.notFound
        }
        return entry
    }

    /// Joins (or asks to join) a study, agreeing to its current consent version with the optional modules in
    /// `modules` (those left out are declined). Wrong join passwords are counted per client and per patient and study.
    func join(
        patient: UserRecord, studyID: UUID, consentVersion: String, modules: [String: Bool] = [:], password: String?,
        client: RateLimiter.Subject? = nil
    ) async throws -> EnrollmentRecord {
        let patientID = try patient.requireID()
        guard let study = try await StudyRecord.find(studyID, on: database) else { throw AppError.notFound }
        let joinMode = study.joinMode
        let status = study.status
        // A practice is entered by pairing code only and is not visible to others.
        guard joinMode != .pairingCode else { throw AppError.notFound }
        let current = try await currentEnrollment(patientID: patientID, studyID: studyID)
        var passwordMatches = false
        if joinMode == .password, status == .running, current == nil, consentVersion == study.consentVersion {
            let limiter = RateLimiter(database: database, services: services)
            let subjects = [.attempts(of: patientID, at: studyID)] + (client.map { [$0] } ?? [])
            try await limiter.ensureAllowed(.studyJoin, subjects)
            if let password, !password.isEmpty, let digest = study.joinPasswordHash {
                passwordMatches = try await services.passwords.verify(password, against: digest)
            }
            if !passwordMatches { try await limiter.recordFailure(.studyJoin, subjects) }
        }
        let initialStatus: EnrollmentStatus
        do {
            initialStatus = try JoinDecision.decide(
                joinMode: joinMode, status: status, currentConsentVersion: study.consentVersion,
                acceptedConsentVersion: consentVersion, hasCurrentEnrollment: current != nil,
                passwordMatches: passwordMatches)
        } catch {
            switch error {
            case .studyClosed: throw AppError.conflict(.studyClosed)
            case .notJoinable: throw AppError.notFound
            case .alreadyEnrolled: throw AppError.conflict(.alreadyEnrolled)
            case .consentVersionOutdated: throw AppError.field("consentVersion", .outdated)
            case .wrongPassword:
                throw AppError.field("password", (password ?? "").isEmpty ? .required : .mismatch)
            }
        }
        let offered =
            try await ConsentService(database: database, services: services).current(of: studyID)?.offeredModules ?? []
        let choices = try ConsentChoices.validate(modules, offered: offered)
        let now = self.now
        let enrollment = EnrollmentRecord(
            studyID: studyID, patientID: patientID, therapistID: nil, status: initialStatus,
            consentVersion: consentVersion, now: now)
        let zone = patient.zone
        try await retryingAllocation {
            try await database.atomically { database in
                // A request is allocated when it is approved: a declined one takes no place of the log.
                if initialStatus == .active {
                    enrollment.arm = try await StudyAllocations(database: database, services: services)
                        .allocate(patientID, zone: zone, joining: study, now: now)
                }
                try await enrollment.create(on: database)
                try await ConsentService.recordJoining(
                    userID: patientID, studyID: studyID, version: consentVersion, choices: choices, now: now,
                    on: database)
            }
        } constraintFailed: {
            // A join sent twice at once: the database kept the first.
            if try await currentEnrollment(patientID: patientID, studyID: studyID) != nil {
                throw AppError.conflict(.alreadyEnrolled)
            }
        }
        if initialStatus == .active {
            _ = try await Planner(database: database, services: services).run(now: now, patients: [patientID])
        }
        return enrollment
    }

    /// Leaves a study (or withdraws a pending request); leaving a practice ends the pairing. With `erase`, what the
    /// person gave in the study goes too (also after leaving it earlier), leaving a tombstone and a receipt by email.
    func leave(patient: UserRecord, studyID: UUID, erase: Bool = false) async throws {
        let patientID = try patient.requireID()
        let current = try await currentEnrollment(patientID: patientID, studyID: studyID)
        if let current { try await withdraw(current, patientID: patientID, studyID: studyID) }
        if erase {
            let enrolledOnce =
                try await EnrollmentRecord.query(on: database)
                .filter(\.$patient.$id == patientID).filter(\.$study.$id == studyID).first() != nil
            guard enrolledOnce, let study = try await StudyRecord.find(studyID, on: database) else {
                throw AppError.conflict(.notEnrolled)
            }
            let receipt = try await ErasureService(database: database, services: services).eraseStudyData(
                of: patient, in: study)
            await ErasureReceipts(services: services).send(
                receipt, to: patient.email, language: patient.language, zone: patient.zone,
                study: study.titles.text(patient.language))
        } else if current == nil {
            throw AppError.conflict(.notEnrolled)
        }
        _ = try await Planner(database: database, services: services).run(now: now, patients: [patientID])
    }

    /// Marks the enrolment withdrawn, revokes the study's consents and drops messages planned ahead.
    private func withdraw(_ enrollment: EnrollmentRecord, patientID: UUID, studyID: UUID) async throws {
        let now = self.now
        try await database.atomically { database in
            enrollment.end(as: .withdrawn, at: now)
            try await enrollment.save(on: database)
            try await ConsentRecord.query(on: database)
                .filter(\.$user.$id == patientID)
                .filter(\.$study.$id == studyID)
                .filter(\.$revokedAt == nil)
                .set(\.$revokedAt, to: now)
                .update()
            // Reinforcement messages planned ahead in the study do not arrive after leaving it.
            try await MessageChoiceService.withdrawPlanned(for: patientID, in: studyID, after: now, on: database)
        }
    }

    private func currentEnrollment(patientID: UUID, studyID: UUID) async throws -> EnrollmentRecord? {
        try await EnrollmentRecord.query(on: database)
            .filter(\.$patient.$id == patientID)
            .filter(\.$study.$id == studyID)
            .filter(\.$status ~~ [EnrollmentStatus.active, EnrollmentStatus.requested])
            .first()
    }

    // MARK: Staff

    func create(by researcher: UserRecord, draft: StudyDraft) async throws -> StudyRecord {
        guard researcher.role == .researcher || researcher.role == .admin else {
            throw AppError.forbidden(.notAllowed)
        }
        let digest = try await draft.joinPassword.asyncMap { try await services.passwords.hash($0) }
        let now = self.now
        let study = StudyRecord(
            ownerID: try researcher.requireID(), title: draft.titles, description: draft.descriptions,
            consentText: draft.consentText, consentVersion: draft.consentVersion, joinMode: draft.joinMode,
            joinPasswordHash: digest, status: draft.status, now: now)
        try StudyArms.set(
            draft.arms, allocation: draft.allocation, settings: draft.allocationSettings,
            today: LocalDate(now, in: researcher.zone), on: study)
        study.asksDemographics = draft.asksDemographics
        study.comparison = draft.comparison
        study.retentionDays = draft.retentionDays
        try await database.atomically { database in
            try await study.create(on: database)
            try await ConsentService.createFirst(
                for: study, texts: draft.consentTexts, version: draft.consentVersion, on: database)
            try await StudyStaffRecord(
                studyID: try study.requireID(), userID: try researcher.requireID(), role: .owner
            ).create(on: database)
        }
        return study
    }

    /// Divides the participants who join from now on into arms, allocated as `allocation` and `settings` say (the
    /// seed of its random choices kept); no arms ends the division. In a practice, patients are allocated as they
    /// pair. Those already in the study keep their arm.
    func setArms(_ arms: [String], allocation: String?, settings: AllocationSettings, in grant: StudyGrant)
        async throws -> StudyRecord
    {
        try grant.require(.designArms)
        let checked = try StudyDraft.validateArms(arms, allocation: allocation, settings: settings)
        let study = grant.study
        try StudyArms.set(
            checked.arms, allocation: checked.allocation, settings: settings,
            today: LocalDate(now, in: grant.viewer.zone), on: study)
        study.updatedAt = now
        try await study.save(on: database)
        try await grant.record(.studyChanged, target: "arms")
        return study
    }

    /// Changes a study's settings. A consent under a new version name becomes the study's next consent version
    /// (for new participants); a changed text under the version name in use is refused, as old versions never change.
    func update(_ grant: StudyGrant, draft: StudyDraft) async throws -> StudyRecord {
        try grant.require(.editStudy)
        let study = grant.study
        if draft.consentVersion != study.consentVersion {
            let consents = ConsentService(database: database, services: services)
            let offered = try await consents.current(of: grant.studyID)?.offeredModules ?? []
            _ = try await consents.create(
                ConsentVersionDraft(
                    version: draft.consentVersion, texts: draft.consentTexts, modules: offered,
                    reconsentRequired: false),
                in: grant)
        } else if draft.consentText != study.consentText {
            throw AppError.field("consentVersion", .taken)
        }
        if let password = draft.joinPassword {
            study.joinPasswordHash = try await services.passwords.hash(password)
        } else if draft.joinMode != .password {
            study.joinPasswordHash = nil
        }
        study.titles = draft.titles
        study.descriptions = draft.descriptions
        study.joinMode = draft.joinMode
        try StudyArms.set(
            draft.arms, allocation: draft.allocation, settings: draft.allocationSettings,
            today: LocalDate(now, in: grant.viewer.zone), on: study)
        study.asksDemographics = draft.asksDemographics
        study.comparison = draft.comparison
        study.retentionDays = draft.retentionDays
        let statusChanged = study.status != draft.status
        if statusChanged { study.closedAt = draft.status == .closed ? now : nil }
        study.status = draft.status
        study.updatedAt = now
        try await study.save(on: database)
        try await grant.record(.studyChanged)
        if statusChanged {
            let participants = try await EnrollmentRecord.query(on: database).filter(\.$study.$id == grant.studyID)
                .all()
            _ = try await Planner(database: database, services: services).run(
                now: now, patients: Set(participants.map { $0.$patient.id }))
        }
        return study
    }

    struct Participant: Sendable {
        let enrollment: EnrollmentRecord
        let pseudonym: String
        /// The patient's name, shown to a practice's own therapist only; research staff see the pseudonym.
        let name: String?
        /// Whether the participant agreed to share their data with research.
        let sharesWithResearch: Bool

        /// The pseudonym, with the name beside it where there is one: how staff pick a participant.
        var label: String { name.map { "\(pseudonym) · \($0)" } ?? pseudonym }
    }

    /// Participants and pending requests under their pseudonyms; every one listed is an audited read.
    func participants(of grant: StudyGrant) async throws -> [Participant] {
        try grant.require(.viewParticipants)
        var enrollments = try await EnrollmentRecord.query(on: database)
            .filter(\.$study.$id == grant.studyID)
            .sort(\.$createdAt, .descending)
            .all()
        if grant.kind == .research, grant.standing == .therapist {
            // A therapist on a research study's team follows their own patients in it, nobody else.
            let own = Set(
                try await Caseloads(database: database).caseload(of: grant.viewer.requireID()).map {
                    $0.enrollment.$patient.id
                })
            enrollments = enrollments.filter { own.contains($0.$patient.id) }
        }
        let profiles = try await PatientProfileRecord.query(on: database)
            .filter(\.$user.$id ~~ enrollments.map { $0.$patient.id })
            .all()
        let pseudonyms = Dictionary(uniqueKeysWithValues: profiles.map { ($0.$user.id, $0.pseudonym) })
        let sharing = Set(profiles.filter(\.shareWithResearch).map { $0.$user.id })
        var names: [UUID: String] = [:]
        if grant.kind == .practice {
            for user in try await UserRecord.query(on: database).filter(\.$id ~~ enrollments.map { $0.$patient.id })
                .all()
            {
                if let id = user.id, let name = user.name { names[id] = name }
            }
        }
        try await grant.record(.participantsRead, patients: enrollments.map { $0.$patient.id })
        return enrollments.compactMap { enrollment in
            pseudonyms[enrollment.$patient.id].map {
                Participant(
                    enrollment: enrollment, pseudonym: $0, name: names[enrollment.$patient.id],
                    sharesWithResearch: sharing.contains(enrollment.$patient.id))
            }
        }
    }

    /// Approves or declines a pending request.
    func decide(in grant: StudyGrant, enrollmentID: UUID, approve: Bool) async throws -> Participant {
        try grant.require(.decideEnrollment)
        guard try await EnrollmentRecord.find(enrollmentID, on: database)?.$study.id == grant.studyID else {
            throw AppError.notFound
        }
        let (now, services, study) = (self.now, self.services, grant.study)
        // Approving allocates, in the transaction that approves: a full study leaves the request waiting.
        let decided = try await retryingAllocation {
            try await database.atomically { database in
                let decided = try await database.updateRow(
                    EnrollmentRecord.schema, id: enrollmentID,
                    set: [
                        "status": SQLBind((approve ? EnrollmentStatus.active : .declined).rawValue),
                        "updated_at": SQLBind(now), "started_at": SQLBind(approve ? now : nil),
                    ],
                    if: { $0.where("status", .equal, SQLBind(EnrollmentStatus.requested)) })
                guard decided, approve, let enrollment = try await EnrollmentRecord.find(enrollmentID, on: database),
                    let patient = try await UserRecord.find(enrollment.$patient.id, on: database)
                else { return decided }
                enrollment.arm = try await StudyAllocations(database: database, services: services).allocate(
                    enrollment.$patient.id, zone: patient.zone, joining: study, now: now)
                try await enrollment.save(on: database)
                return true
            }
        }
        guard decided, let enrollment = try await EnrollmentRecord.find(enrollmentID, on: database) else {
            throw AppError.conflict(.alreadyDecided)
        }
        let patientID = enrollment.$patient.id
        try await grant.record(.enrollmentDecided, patients: [patientID], target: approve ? "approved" : "declined")
        if approve {
            _ = try await Planner(database: database, services: services).run(now: now, patients: [patientID])
        }
        guard let profile = try await PatientProfileRecord.query(on: database).filter(\.$user.$id == patientID).first()
        else { throw AppError.notFound }
        return Participant(
            enrollment: enrollment, pseudonym: profile.pseudonym, name: nil,
            sharesWithResearch: profile.shareWithResearch)
    }

    /// Requests waiting for a decision in these studies.
    func pendingRequestCount(in studies: [StudyRecord]) async throws -> Int {
        let studyIDs = studies.compactMap(\.id)
        guard !studyIDs.isEmpty else { return 0 }
        return try await EnrollmentRecord.query(on: database)
            .filter(\.$study.$id ~~ studyIDs)
            .filter(\.$status == EnrollmentStatus.requested)
            .count()
    }
}

extension StudyService {
    /// How often a join draws its allocation again when others take the same place of the log at once.
    static let allocationAttempts = 8

    /// Runs `body`, which allocates, again when another allocation took the same place of the log at once;
    /// `constraintFailed` first throws what another constraint's failure means.
    func retryingAllocation<T: Sendable>(
        _ body: () async throws -> T, constraintFailed: () async throws -> Void = {}
    ) async throws -> T {
        var attempts = 0
        while true {
            do {
                return try await body()
            } catch {
                guard (error as? any DatabaseError)?.isConstraintFailure == true else { throw error }
                try await constraintFailed()
                attempts += 1
                if attempts == Self.allocationAttempts { throw error }
            }
        }
    }
}

extension Optional {
    func asyncMap<T>(_ transform: (Wrapped) async throws -> T) async rethrows -> T? {
        guard let value = self else { return nil }
        return try await transform(value)
    }
}
