import Fluent
import Foundation
import InterludeCore

/// A study's rules: kept per study, evaluated after each submission and for runs of missed prompts, every
/// firing logged with its reason and done once.
struct RuleService: Sendable {
    let database: any Database
    let services: AppServices

    private var now: Date { services.clock.now }

    struct Stored: Sendable {
        let id: UUID?
        let studyID: UUID?
        let rule: StudyRule
        /// When it was added; nil for the built-in rules.
        var createdAt: Date? = nil
    }

    // MARK: Configuration

    func rules(in grant: StudyGrant) async throws -> [Stored] {
        try grant.require(.viewRules)
        return try await stored(in: grant.studyID)
    }

    func add(_ rule: StudyRule, in grant: StudyGrant) async throws -> Stored {
        try grant.require(.editRules)
        let checked = try StudyRule.validate(rule, instruments: try await instruments(usableIn: grant.studyID))
        let record = RuleRecord(
            studyID: grant.studyID, createdBy: try grant.viewer.requireID(), definition: try Self.encode(checked),
            now: now)
        try await record.create(on: database)
        try await grant.record(.ruleChanged, target: "rule:\(try record.requireID())")
        return Stored(id: record.id, studyID: grant.studyID, rule: checked, createdAt: record.createdAt)
    }

    func remove(_ ruleID: UUID, in grant: StudyGrant) async throws {
        try grant.require(.editRules)
        guard let record = try await RuleRecord.find(ruleID, on: database), record.$study.id == grant.studyID else {
            throw AppError.notFound
        }
        try await record.delete(on: database)
        try await grant.record(.ruleChanged, target: "rule:\(ruleID):removed")
    }

    /// The newest definition of every published instrument the study may use, which its rules may name.
    private func instruments(usableIn studyID: UUID) async throws -> [String: InstrumentDefinition] {
        let catalog = InstrumentCatalog(database: database, services: services)
        var result: [String: InstrumentDefinition] = [:]
        for record in try await catalog.overview() where record.isUsable(in: studyID) {
            let latest = record.isPublished ? record : try await catalog.latestPublished(record.key)
            if let latest { result[latest.key] = try latest.decodedDefinition() }
        }
        return result
    }

    /// One study's rules, or every study's (nil); oldest first. With `participant`, only while that patient takes part
    /// in the study: none otherwise.
    private func stored(in studyID: UUID?, participant: UUID? = nil) async throws -> [Stored] {
        try await Statements.rules(in: studyID, participant: participant, on: database).map {
            Stored(
                id: $0.id, studyID: $0.$study.id,
                rule: try JSONDecoder().decode(StudyRule.self, from: Data($0.definition.utf8)), createdAt: $0.createdAt)
        }
    }

    static func encode(_ rule: StudyRule) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return String(decoding: try encoder.encode(rule), as: UTF8.self)
    }

    // MARK: Evaluation

    /// The rules that apply to a response: the built-in ones, in the study the response belongs to (without one,
    /// the patient's practice), and that study's own rules while the patient takes part in it. A study's rules
    /// never look at another study's answers. Read before the transaction that stores the response, so the one
    /// writer spends its time on writes.
    func applicable(to patientID: UUID, context: UUID?) async throws -> [Stored] {
        var home = context
        if home == nil { home = try await Caseloads(database: database).practiceEnrollment(of: patientID)?.$study.id }
        let builtIn = Stored(id: nil, studyID: home, rule: .phq9Item9)
        guard let context else { return [builtIn] }
        let rules = try await stored(in: context, participant: patientID)
        guard !rules.isEmpty, try await receivesActions(patientID, in: context) else { return [builtIn] }
        return [builtIn] + rules
    }

    /// Whether a study's rules act for the participant: not for those of a control arm.
    private func receivesActions(_ patientID: UUID, in studyID: UUID) async throws -> Bool {
        guard let study = try await StudyRecord.find(studyID, on: database),
            let enrollment = try await EnrollmentRecord.query(on: database).filter(\.$study.$id == studyID)
                .filter(\.$patient.$id == patientID).filter(\.$status == EnrollmentStatus.active).first()
        else { return false }
        return StudyArms.receivesInterventions(enrollment, in: study)
    }

    /// A rule a response meets, and why.
    struct Matched: Sendable {
        let stored: Stored
        let match: RuleMatch
    }

    /// The `applicable` rules a response meets, worked out from the response alone before the transaction that stores
    /// it: the writer, which every submission waits for, then only stores what fires. The response's facts are
    /// gathered only when a rule watches its instrument.
    func matches(_ applicable: [Stored], answers: Answers, scores: [ScoreResult], definition: InstrumentDefinition)
        -> [Matched]
    {
        guard applicable.contains(where: { $0.rule.watchesSubmissions(of: definition.key) }) else { return [] }
        let facts = ResponseFacts(definition: definition, answers: answers, scores: scores)
        return applicable.compactMap { stored in stored.rule.evaluate(facts).map { Matched(stored: stored, match: $0) }
        }
    }

    /// Inside the transaction that stores the response: fires each of the `matched` rules, once per response.
    func fire(_ matched: [Matched], response responseID: UUID, patientID: UUID) async throws {
        for rule in matched {
            let key = "submitted:\(rule.stored.id?.uuidString ?? "built-in:\(rule.stored.rule.name)"):\(responseID)"
            try await fire(rule.stored, match: rule.match, patientID: patientID, responseID: responseID, key: key)
        }
    }

    /// How far back the planner looks for prompts that expired, to find runs of missed ones.
    static let missedLookBack: TimeInterval = 86_400

    /// For patients whose prompts expired lately: fires the missed-in-a-row rules their runs reach. A run fires a
    /// rule once, however long it grows. Returns how many fired.
    @discardableResult
    func evaluateMissed(since: Date) async throws -> Int {
        // Only studies with such a rule matter, and in them only patients still taking part.
        let missedRules = try await stored(in: nil).filter {
            if case .missedInARow = $0.rule.trigger { return true } else { return false }
        }
        let studies = Array(Set(missedRules.compactMap(\.studyID)))
        guard !studies.isEmpty else { return 0 }
        let patients = try await PromptRecord.query(on: database)
            .filter(\.$status == PromptStatus.expired)
            .filter(\.$closesAt > since)
            .filter(\.$closesAt <= now)
            .filter(\.$study.$id ~~ studies)
            .field(\.$patient.$id).unique().all().map { $0.$patient.id }
        let studyRecords = Dictionary(
            uniqueKeysWithValues: try await StudyRecord.query(on: database).filter(\.$id ~~ studies).all().map {
                ($0.id!, $0)
            })
        var fired = 0
        for patientID in patients {
            // A control arm's participants take part without any rule acting for them.
            let active = Set(
                try await EnrollmentRecord.query(on: database)
                    .filter(\.$patient.$id == patientID).filter(\.$status == EnrollmentStatus.active)
                    .filter(\.$study.$id ~~ studies).all()
                    .filter { enrollment in
                        studyRecords[enrollment.$study.id].map { StudyArms.receivesInterventions(enrollment, in: $0) }
                            ?? false
                    }
                    .map { $0.$study.id })
            let rules = missedRules.filter { $0.studyID.map(active.contains) == true }
            guard !rules.isEmpty else { continue }
            let closed = try await PromptRecord.query(on: database)
                .filter(\.$patient.$id == patientID)
                .filter(\.$status ~~ [PromptStatus.expired, PromptStatus.completed])
                .filter(\.$closesAt <= now)
                .sort(\.$closesAt, .descending)
                .limit(500)
                .all()
            for stored in rules {
                guard case .missedInARow(_, let instrumentKey) = stored.rule.trigger else { continue }
                let relevant = closed.filter {
                    $0.$study.id == stored.studyID && (instrumentKey == nil || $0.instrumentKey == instrumentKey)
                }
                let streak = MissedStreak.length(ofNewestFirst: relevant.map(\.status))
                guard let match = stored.rule.evaluateMissed(streak: streak, instrumentKey: instrumentKey),
                    let first = relevant.prefix(streak).last?.id
                else { continue }
                let key = "missed:\(stored.id?.uuidString ?? stored.rule.name):\(patientID):\(first)"
                do {
                    let firing = try await database.atomically { transaction in
                        try await RuleService(database: transaction, services: services)
                            .fire(stored, match: match, patientID: patientID, responseID: nil, key: key)
                    }
                    if firing != nil { fired += 1 }
                } catch let error as any DatabaseError where error.isConstraintFailure {
                    // Another process fired it at the same moment.
                    continue
                }
            }
        }
        return fired
    }

    /// Logs the firing (once per key) and carries out the rule's action; callers run it in a transaction, so
    /// the firing and its action are stored together or not at all.
    @discardableResult
    private func fire(_ stored: Stored, match: RuleMatch, patientID: UUID, responseID: UUID?, key: String) async throws
        -> RuleFiringRecord?
    {
        if try await RuleFiringRecord.query(on: database).filter(\.$dedupeKey == key).first() != nil { return nil }
        let firing = RuleFiringRecord()
        firing.id = UUID()
        firing.createdAt = now
        firing.ruleID = stored.id
        firing.ruleName = stored.rule.name
        firing.studyID = stored.studyID
        firing.$patient.id = patientID
        firing.responseID = responseID
        firing.dedupeKey = key
        firing.reason = try services.cipher.seal(match.reason)
        firing.outcome = stored.rule.action.kind
        try await firing.create(on: database)
        firing.outcome = try await act(stored, reason: match.reason, patientID: patientID, firingID: firing.requireID())
        try await firing.save(on: database)
        return firing
    }

    private func act(_ stored: Stored, reason: String, patientID: UUID, firingID: UUID) async throws -> String {
        switch stored.rule.action {
        case .intervention(let draft):
            let sent = try await InterventionService(database: database, services: services).deliver(
                draft, to: patientID, studyID: stored.studyID, origin: .rule, senderID: nil, ruleID: stored.id)
            return "intervention \(sent.id.lowercasedText)"
        case .alert(let priority, let message):
            let alert = try await AlertService(database: database, services: services).raise(
                about: patientID, studyID: stored.studyID, priority: priority, reason: "\(message) (\(reason))",
                firingID: firingID)
            return alert.map { "alert \($0.id?.lowercasedText ?? "")" } ?? "alert: nobody to alert"
        case .prompt(let instrumentKey, let openHours):
            guard
                let version = try await InstrumentCatalog(database: database, services: services)
                    .pinnedVersion(instrumentKey, for: stored.studyID)
            else {
                return "prompt: \(instrumentKey) is not published"
            }
            let prompt = PromptRecord(
                patientID: patientID, studyID: stored.studyID, assignedBy: nil, instrumentKey: instrumentKey,
                instrumentVersion: version.version, opensAt: now,
                closesAt: now.addingTimeInterval(TimeInterval(openHours * 3600)), source: PromptSource.rule, now: now)
            try await prompt.create(on: database)
            return "prompt \(prompt.id?.lowercasedText ?? "")"
        }
    }

    /// A firing as its reader sees it: why it fired only when they may read the participant's data.
    struct Firing: Sendable {
        let record: RuleFiringRecord
        let pseudonym: String?
        let reason: String?
    }

    /// The study's log of firings, newest first.
    func firings(in grant: StudyGrant, limit: Int = 200) async throws -> [Firing] {
        try grant.require(.viewFirings)
        let firings = try await RuleFiringRecord.query(on: database)
            .filter(\.$studyID == grant.studyID).sort(\.$createdAt, .descending).limit(limit).all()
        let patients = Array(Set(firings.map { $0.$patient.id }))
        guard !patients.isEmpty else { return [] }
        try await grant.record(.firingsRead, patients: patients)
        let profiles = try await PatientProfileRecord.query(on: database).filter(\.$user.$id ~~ patients).all()
        let byPatient = Dictionary(uniqueKeysWithValues: profiles.map { ($0.$user.id, $0) })
        return try firings.map { firing in
            let profile = byPatient[firing.$patient.id]
            let readable =
                grant.allows(.readParticipantData)
                && (grant.kind == .practice || profile?.shareWithResearch == true)
            return Firing(
                record: firing, pseudonym: profile?.pseudonym,
                reason: readable ? try services.cipher.open(firing.reason) : nil)
        }
    }

    // MARK: Dry run

    struct DryRunLine: Sendable {
        let at: Date
        let reason: String?
    }

    /// The participants whose past the staff member may try a rule on: those whose data they may read in the study.
    /// Listing them is a read of who takes part, and is audited as one.
    func dryRunCandidates(in grant: StudyGrant) async throws -> [(patientID: UUID, pseudonym: String)] {
        guard grant.allows(.dryRunRules) else { return [] }
        let enrollments = try await EnrollmentRecord.query(on: database)
            .filter(\.$study.$id == grant.studyID).filter(\.$status == EnrollmentStatus.active).all()
        let profiles = try await PatientProfileRecord.query(on: database)
            .filter(\.$user.$id ~~ enrollments.map { $0.$patient.id }).all()
        let byPatient = Dictionary(uniqueKeysWithValues: profiles.map { ($0.$user.id, $0) })
        let candidates = enrollments.compactMap { enrollment -> (patientID: UUID, pseudonym: String)? in
            guard let profile = byPatient[enrollment.$patient.id] else { return nil }
            let readable =
                grant.kind == .practice ? enrollment.$therapist.id == grant.viewer.id : profile.shareWithResearch
            return readable ? (enrollment.$patient.id, profile.pseudonym) : nil
        }.sorted { $0.pseudonym < $1.pseudonym }
        try await grant.record(.participantsRead, patients: candidates.map(\.patientID), target: "rules:dry-run")
        return candidates
    }

    /// What the rule would have done with the participant's past responses in this study (or runs of missed
    /// prompts); changes nothing. The participant must be one of `dryRunCandidates`.
    func dryRun(_ rule: StudyRule, in grant: StudyGrant, patientID: UUID) async throws -> [DryRunLine] {
        try grant.require(.dryRunRules)
        let checked = try StudyRule.validate(rule, instruments: try await instruments(usableIn: grant.studyID))
        let chart: PatientChart
        do {
            chart = try await PatientChart.open(patientID, in: grant, database: database, services: services)
        } catch AppError.notFound {
            throw AppError.field("patientId", .unknown)
        }
        try await grant.record(.ruleDryRun, patients: [patientID])
        let studyID = grant.studyID
        switch checked.trigger {
        case .submitted(let instrumentKey, _):
            let responses = try await chart.responses(instrumentKey: instrumentKey)
            let catalog = InstrumentCatalog(database: database, services: services)
            let definitions = try await catalog.definitions(
                Set(
                    responses.map {
                        InstrumentVersionKey(key: $0.record.instrumentKey, version: $0.record.instrumentVersion)
                    }))
            return responses.compactMap { response in
                guard
                    let definition = definitions[
                        InstrumentVersionKey(
                            key: response.record.instrumentKey, version: response.record.instrumentVersion)]
                else { return nil }
                let facts = ResponseFacts(definition: definition, answers: response.answers, scores: response.scores)
                return DryRunLine(at: response.record.completedAt, reason: checked.evaluate(facts)?.reason)
            }
        case .missedInARow(_, let instrumentKey):
            var query = PromptRecord.query(on: database)
                .filter(\.$patient.$id == patientID)
                .filter(\.$study.$id == studyID)
                .filter(\.$status ~~ [PromptStatus.expired, PromptStatus.completed])
                .filter(\.$closesAt <= now)
            if let instrumentKey { query = query.filter(\.$instrumentKey == instrumentKey) }
            let closed = try await query.sort(\.$closesAt).limit(1000).all()
            var streak = 0
            var lines: [DryRunLine] = []
            var firedInRun = false
            for prompt in closed {
                if prompt.status == PromptStatus.completed {
                    streak = 0
                    firedInRun = false
                    continue
                }
                streak += 1
                let match = checked.evaluateMissed(streak: streak, instrumentKey: instrumentKey)
                lines.append(DryRunLine(at: prompt.closesAt, reason: firedInRun ? nil : match?.reason))
                if match != nil { firedInRun = true }
            }
            return lines.reversed()
        }
    }
}
