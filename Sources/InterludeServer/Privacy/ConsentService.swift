import Fluent
import Foundation
import InterludeCore

/// Study consents as versioned documents with modules, and every person's decisions on them and on the
/// privacy policy. A version is written once; a new one marked "re-consent required" holds back the study's
/// new data from participants who agreed to an earlier one until they answer.
struct ConsentService: Sendable {
    let database: any Database
    let services: AppServices

    private var now: Date { services.clock.now }

    // MARK: Versions

    func versions(of studyID: UUID) async throws -> [ConsentVersionRecord] {
        try await ConsentVersionRecord.query(on: database).filter(\.$study.$id == studyID).sort(\.$sequence).all()
    }

    /// The versions a participant of `arm` (nil: not allocated) answers, in order: everybody's and their arm's.
    func versions(of studyID: UUID, arm: String?) async throws -> [ConsentVersionRecord] {
        try await versions(of: studyID).filter { $0.arm == nil || $0.arm == arm }
    }

    /// The version a participant joining now agrees to, before any allocation; nil for a practice, which has none.
    func current(of studyID: UUID) async throws -> ConsentVersionRecord? {
        try await ConsentVersionRecord.query(on: database).filter(\.$study.$id == studyID).filter(\.$arm == nil)
            .sort(\.$sequence, .descending).first()
    }

    /// The optional modules each study's current version offers.
    func currentVersions(of studyIDs: [UUID]) async throws -> [UUID: ConsentVersionRecord] {
        guard !studyIDs.isEmpty else { return [:] }
        let versions = try await ConsentVersionRecord.query(on: database).filter(\.$study.$id ~~ studyIDs)
            .filter(\.$arm == nil).sort(\.$sequence).all()
        return Dictionary(versions.map { ($0.$study.id, $0) }, uniquingKeysWith: { _, later in later })
    }

    /// A study's versions as its team sees them.
    func versions(in grant: StudyGrant) async throws -> [ConsentVersionRecord] {
        try grant.require(.viewStudy)
        return try await versions(of: grant.studyID)
    }

    /// Adds a version after the study's latest; the study shows its text from now on, or, for one arm, that arm's
    /// participants do. A version name used before is refused: an old version never changes.
    func create(_ draft: ConsentVersionDraft, in grant: StudyGrant) async throws -> ConsentVersionRecord {
        try grant.require(.editStudy)
        guard grant.study.kind == .research else { throw AppError.notFound }
        let record = try await write(draft, in: grant)
        try await grant.record(.consentVersionCreated, target: draft.version)
        return record
    }

    /// Writes a version covering what the study collects now, after the latest; the caller records it in the audit
    /// log (which writes outside a transaction the version may be part of).
    private func write(_ draft: ConsentVersionDraft, in grant: StudyGrant) async throws -> ConsentVersionRecord {
        let studyID = grant.studyID
        let now = self.now
        let record: ConsentVersionRecord
        do {
            record = try await database.atomically { database in
                let latest = try await ConsentVersionRecord.query(on: database).filter(\.$study.$id == studyID)
                    .sort(\.$sequence, .descending).first()
                let record = try ConsentVersionRecord(
                    studyID: studyID, sequence: (latest?.sequence ?? 0) + 1, draft: draft, now: now)
                record.collects = grant.study.recordKinds
                try await record.create(on: database)
                guard draft.arm == nil else { return record }
                let study = grant.study
                study.consentVersion = draft.version
                study.consentText = draft.texts.text(.fallback)
                study.updatedAt = now
                try await study.save(on: database)
                return record
            }
        } catch let error as any DatabaseError where error.isConstraintFailure {
            throw AppError.conflict(.versionExists)
        }
        return record
    }

    /// The first version of a new study, written with it.
    static func createFirst(for study: StudyRecord, texts: LocalizedText, version: String, on database: any Database)
        async throws
    {
        let draft = ConsentVersionDraft(version: version, texts: texts, modules: [], reconsentRequired: false)
        let record = try ConsentVersionRecord(
            studyID: try study.requireID(), sequence: 1, draft: draft, now: study.createdAt)
        record.collects = study.recordKinds
        try await record.create(on: database)
    }

    /// When a research study starts collecting a kind of record its consent in force does not name, a new version
    /// with the same texts and modules, marked "re-consent required": nobody's records of the new kind belong to the
    /// study before they agree. Collecting less needs no new version, and while nobody has answered the study's
    /// consent yet (a study being set up) the version in force simply names what it collects. Answers the version
    /// written, if one was.
    func coverCollection(in grant: StudyGrant) async throws -> ConsentVersionRecord? {
        guard grant.study.kind == .research, let current = try await current(of: grant.studyID) else { return nil }
        guard !grant.study.recordSettings.collects.subtracting(current.collectedKinds).isEmpty else { return nil }
        let answered =
            try await ConsentRecord.query(on: database).filter(\.$study.$id == grant.studyID)
            .filter(\.$document == ConsentRecord.Document.studyConsent.rawValue).first() != nil
        guard answered else {
            current.collects = grant.study.recordKinds
            try await current.save(on: database)
            return nil
        }
        let taken = Set(try await versions(of: grant.studyID).map(\.version))
        let base = String(current.version.prefix(ConsentVersionDraft.versionMaxLength - 6))
        let label = (2...).lazy.map { "\(base)-r\($0)" }.first { !taken.contains($0) } ?? UUID().uuidString
        let draft = ConsentVersionDraft(
            version: label, texts: current.localizedTexts, modules: current.offeredModules, reconsentRequired: true)
        return try await write(draft, in: grant)
    }

    // MARK: The person's view

    /// One document as the person sees it: the version in force, their decision, and what changed since the
    /// version they agreed to.
    struct DocumentState: Sendable {
        let document: ConsentRecord.Document
        let study: StudyRecord?
        let version: String
        let text: String
        let modules: [ConsentModule]
        /// The kinds of records a study's version collects; nil for the privacy policy.
        let collects: Set<RecordKind>?
        let reconsentRequired: Bool
        let mustAnswer: Bool
        let decision: ConsentRecord?
        let changes: [LineDiff.Line]?
    }

    struct Overview: Sendable {
        let documents: [DocumentState]
        /// Every decision, newest first, with the studies they belong to.
        let history: [ConsentRecord]
        let studies: [UUID: StudyRecord]
    }

    /// The privacy policy and the consent of every study the person belongs to or waits for, with their history.
    func overview(of patient: UserRecord, language: Language) async throws -> Overview {
        let patientID = try patient.requireID()
        // Newest first; of two decisions at the same moment, the one in force first.
        let history = try await ConsentRecord.query(on: database).filter(\.$user.$id == patientID).all()
            .sorted { ($0.grantedAt, $0.replacedAt == nil ? 1 : 0) > ($1.grantedAt, $1.replacedAt == nil ? 1 : 0) }
        let texts = SiteTexts(database: database)
        var documents = [
            DocumentState(
                document: .privacyPolicy, study: nil, version: try await texts.privacyPolicyVersion(),
                text: try await texts.text(.privacyPolicy, language, localizer: services.localizer), modules: [],
                collects: nil, reconsentRequired: false, mustAnswer: false,
                decision: history.first {
                    $0.document == ConsentRecord.Document.privacyPolicy.rawValue && $0.replacedAt == nil
                },
                changes: nil)
        ]
        let enrollments = try await EnrollmentRecord.query(on: database).filter(\.$patient.$id == patientID)
            .filter(\.$status ~~ [EnrollmentStatus.active, EnrollmentStatus.requested]).all()
        let studies = try await StudyRecord.query(on: database).filter(\.$id ~~ enrollments.map { $0.$study.id })
            .filter(\.$joinMode != JoinMode.pairingCode).sort(\.$title).all()
        for study in studies {
            let studyID = try study.requireID()
            let arm = enrollments.first { $0.$study.id == studyID }?.arm
            let versions = try await versions(of: studyID, arm: arm)
            guard let current = versions.last else { continue }
            let decision = try await decision(of: patientID, in: studyID)
            let agreed = decision.flatMap { decision in versions.first { $0.version == decision.version } }
            let standing = ConsentStanding(
                accepted: agreed?.sequence, versions: versions.map { ($0.sequence, $0.reconsentRequired) })
            let text = current.localizedTexts.text(language)
            documents.append(
                DocumentState(
                    document: .studyConsent, study: study, version: current.version, text: text,
                    modules: current.offeredModules,
                    collects: current.collectedKinds, reconsentRequired: current.reconsentRequired,
                    mustAnswer: standing.mustAnswer, decision: decision,
                    changes: agreed.flatMap {
                        $0.sequence == current.sequence
                            ? nil : LineDiff.lines(from: $0.localizedTexts.text(language), to: text)
                    }))
        }
        let named = try await StudyRecord.query(on: database).filter(\.$id ~~ Set(history.compactMap { $0.$study.id }))
            .all()
        return Overview(
            documents: documents, history: history,
            studies: Dictionary(uniqueKeysWithValues: named.map { ($0.id!, $0) }))
    }

    // MARK: Decisions

    /// The person's decision in force on a study's consent: neither replaced by a later one nor revoked.
    func decision(of patientID: UUID, in studyID: UUID) async throws -> ConsentRecord? {
        try await Statements.consentInForce(of: patientID, in: studyID, on: database)
    }

    func standing(of patientID: UUID, in studyID: UUID) async throws -> ConsentStanding {
        let versions = try await Statements.consentVersionsAgreed(by: patientID, in: studyID, on: database)
        return ConsentStanding(
            accepted: versions.first(where: \.agreed)?.sequence,
            versions: versions.map { ($0.sequence, $0.reconsentRequired) })
    }

    /// Refuses new data for a study while the person has a version to answer first.
    func requireAnswered(by patientID: UUID, in studyID: UUID) async throws {
        if try await standing(of: patientID, in: studyID).mustAnswer { throw AppError.conflict(.consentRequired) }
    }

    /// Whether the person's decision in force grants an optional module; a decision that does not say declines it.
    func grants(_ module: ConsentModule, by patientID: UUID, in studyID: UUID) async throws -> Bool {
        if module == .context, try await StudyRecord.find(studyID, on: database)?.kind == .practice {
            // A practice has no consent document: the person's own switch in their profile decides.
            return try await PatientProfileRecord.query(on: database).filter(\.$user.$id == patientID).first()?
                .sharesContextWithTherapist ?? false
        }
        return try await decision(of: patientID, in: studyID)?.choices?.grants(module) ?? false
    }

    /// Records the choices made on joining; part of the join's transaction.
    static func recordJoining(
        userID: UUID, studyID: UUID, version: String, choices: ConsentChoices, now: Date, on database: any Database
    ) async throws {
        try await ConsentRecord(
            userID: userID, document: .studyConsent, studyID: studyID, version: version, grantedAt: now,
            method: .joining,
            choices: choices
        ).create(on: database)
    }

    /// The person answers the current version of a study's consent (or changes their optional modules under it),
    /// or, without a study, agrees to the current privacy policy. Their earlier decision stays in the history.
    @discardableResult
    func decide(patient: UserRecord, studyID: UUID?, version: String, modules: [String: Bool]) async throws
        -> ConsentRecord
    {
        let patientID = try patient.requireID()
        guard let studyID else {
            if !modules.isEmpty { throw AppError.field("modules", .notAllowed) }
            guard version == (try await SiteTexts(database: database).privacyPolicyVersion()) else {
                throw AppError.field("version", .outdated)
            }
            return try await replace(
                { $0.filter(\.$document == ConsentRecord.Document.privacyPolicy.rawValue) },
                with: ConsentRecord(
                    userID: patientID, document: .privacyPolicy, version: version, grantedAt: now, method: .reconsent))
        }
        let enrolled = try await EnrollmentRecord.query(on: database)
            .filter(\.$patient.$id == patientID).filter(\.$study.$id == studyID)
            .filter(\.$status ~~ [EnrollmentStatus.active, EnrollmentStatus.requested])
            .first()
        guard let enrolled else {
            guard try await StudyRecord.find(studyID, on: database) != nil else { throw AppError.notFound }
            throw AppError.conflict(.notEnrolled)
        }
        guard let current = try await versions(of: studyID, arm: enrolled.arm).last else { throw AppError.notFound }
        guard version == current.version else { throw AppError.field("version", .outdated) }
        let choices = try ConsentChoices.validate(modules, offered: current.offeredModules)
        let method: ConsentRecord.Method =
            try await decision(of: patientID, in: studyID)?.version == version ? .change : .reconsent
        let record = try ConsentRecord(
            userID: patientID, document: .studyConsent, studyID: studyID, version: version, grantedAt: now,
            method: method,
            choices: choices)
        enrolled.consentVersion = version
        enrolled.updatedAt = now
        return try await replace(
            { $0.filter(\.$study.$id == studyID).filter(\.$document == ConsentRecord.Document.studyConsent.rawValue) },
            with: record, saving: enrolled)
    }

    /// Marks the person's decisions in force on the same document replaced and stores the new one, together.
    private func replace(
        _ document: @escaping @Sendable (QueryBuilder<ConsentRecord>) -> QueryBuilder<ConsentRecord>,
        with record: ConsentRecord,
        saving enrollment: EnrollmentRecord? = nil
    ) async throws -> ConsentRecord {
        let now = self.now
        let userID = record.$user.id
        try await database.atomically { database in
            try await document(ConsentRecord.query(on: database)).filter(\.$user.$id == userID).filter(
                \.$revokedAt == nil
            )
            .filter(\.$replacedAt == nil).set(\.$replacedAt, to: now).update()
            try await record.create(on: database)
            try await enrollment?.save(on: database)
        }
        return record
    }
}
