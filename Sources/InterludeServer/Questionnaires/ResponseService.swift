import Fluent
import Foundation
import InterludeCore
import Vapor

/// Receiving, storing and reading completed questionnaires.
package struct ResponseService: Sendable {
    let database: any Database
    let services: AppServices

    package init(database: any Database, services: AppServices) {
        self.database = database
        self.services = services
    }

    private var now: Date { services.clock.now }

    /// A submission as the app sends it.
    struct Submission: Sendable {
        var id: UUID
        var promptID: UUID
        var instrumentKey: String
        var version: Int
        var answers: Answers
        var startedAt: Date?
        var completedAt: Date
        var context: AnswerContext? = nil
        /// Paradata: the seconds spent on each item, by item id.
        var itemSeconds: [String: Double] = [:]
    }

    /// The longest time an app may say a person spent on one item: a day, in milliseconds.
    static let longestItemTime = 86_400_000

    /// A stored response with its answers opened and its scores decoded.
    struct Stored: Sendable {
        let record: ResponseRecord
        let answers: Answers
        let scores: [ScoreResult]
    }

    /// What becomes of context sent for a study where the person declined it.
    enum DeclinedContext: Sendable {
        /// The submission is refused, naming `context`: the app asked for it against the person's answer.
        case refused
        /// The answers are kept without it: a device captured it while the person allowed it, and they withdrew
        /// before it was sent.
        case dropped
    }

    enum Outcome: Sendable {
        case created(Stored)
        /// The same submission arrived again; the first result, unchanged.
        case repeated(Stored)
    }

    /// Checks a submission against its prompt and the exact instrument version, scores it and stores it once.
    func submit(_ submission: Submission, patient: UserRecord, declinedContext: DeclinedContext = .refused) async throws
        -> Outcome
    {
        let patientID = try patient.requireID()
        let now = self.now
        // A submission sent again finds its prompt completed by it; an id another response holds is turned away
        // by the database's key, below. Neither needs a look-up before the prompt.
        guard let prompt = try await SubmittedPrompt.read(submission.promptID, on: database),
            prompt.patientID == patientID
        else {
            try await ErasedIDs(database: database, services: services).refuse(submission.id, submission.promptID)
            throw AppError.field("promptId", .unknown)
        }
        var validator = FieldValidator()
        if submission.instrumentKey != prompt.instrumentKey { validator.add("instrumentKey", .mismatch) }
        if submission.version != prompt.instrumentVersion { validator.add("version", .mismatch) }
        try validator.check()
        switch prompt.status {
        case .completed:
            // The same submission sent again, or stored meanwhile by a request that overtook this one.
            if prompt.responseID == submission.id,
                let stored = try await ResponseRecord.find(submission.id, on: database)
            {
                return .repeated(try open(stored))
            }
            throw AppError.conflict(.promptCompleted)
        case .cancelled: throw AppError.conflict(.promptCancelled)
        case .inactive: throw AppError.conflict(.promptInactive)
        default: break
        }
        var grantsContext = false
        if let studyID = prompt.studyID {
            let consents = ConsentService(database: database, services: services)
            try await consents.requireAnswered(by: patientID, in: studyID)
            if submission.context != nil {
                grantsContext = try await consents.grants(.context, by: patientID, in: studyID)
            }
        }
        if submission.context != nil, !grantsContext, declinedContext == .refused {
            throw AppError.field("context", .notAllowed)
        }
        let status = PromptStatus.at(now, recorded: prompt.status, opensAt: prompt.opensAt, closesAt: prompt.closesAt)
        if PromptService.mayWait(occurrence: prompt.occurrence, status: status, studyID: prompt.studyID),
            let studyID = prompt.studyID,
            try await PromptService(database: database, services: services).studiesWaitingForOneTime(of: patientID)
                .contains(studyID)
        {
            throw AppError.conflict(.oneTimeFirst)
        }
        try PromptTiming.checkSubmission(
            startedAt: submission.startedAt, completedAt: submission.completedAt, opensAt: prompt.opensAt,
            closesAt: prompt.closesAt, now: now)
        guard
            let definition = try await InstrumentCatalog(database: database, services: services)
                .definition(prompt.instrumentKey, prompt.instrumentVersion)
        else { throw AppError.notFound }
        let scores = try definition.validatedScores(for: submission.answers)
        let asked = Set(definition.items.map(\.id))
        if let unknown = submission.itemSeconds.keys.sorted().first(where: { !asked.contains($0) }) {
            throw AppError.field("itemTimesMs.\(unknown)", .unknown)
        }
        let record = ResponseRecord(
            id: submission.id, patientID: patientID, promptID: submission.promptID, instrumentKey: definition.key,
            instrumentVersion: definition.version, sealedAnswers: try seal(submission.answers),
            scores: try services.cipher.seal(Self.encode(scores, fast: services.settings.apiFastPaths)),
            openedAt: prompt.openedAt, startedAt: submission.startedAt,
            completedAt: submission.completedAt, receivedAt: now)
        record.studyID = prompt.studyID
        record.itemTimes = submission.itemSeconds.isEmpty ? nil : try Self.json(submission.itemSeconds)
        record.quality = try Self.json(
            ResponseQuality.of(definition, answers: submission.answers, itemSeconds: submission.itemSeconds))
        // Context the instrument does not ask for is not kept, whatever the app sent.
        record.context = try submission.context?.kept(granted: grantsContext, asked: definition.context)
            .map { try services.cipher.seal(Self.encode($0)) }
        let rules = RuleService(database: database, services: services)
        let matched = rules.matches(
            try await rules.applicable(to: patientID, context: prompt.studyID), answers: submission.answers,
            scores: scores, definition: definition)
        do {
            try await database.atomically { database in
                try await Statements.storeSubmission(
                    record, id: submission.id, promptID: submission.promptID, at: now, on: database)
                try await RuleService(database: database, services: services)
                    .fire(matched, response: submission.id, patientID: patientID)
            }
        } catch let error as any DatabaseError where error.isConstraintFailure {
            // Another request won the race: the same submission (answer with what was stored), or another one for
            // this prompt, which the database's one-response-per-prompt rule turned away.
            if let stored = try await ResponseRecord.find(submission.id, on: database) {
                guard stored.$patient.id == patientID else { throw AppError.conflict(.responseIDTaken) }
                return .repeated(try open(stored))
            }
            throw AppError.conflict(.promptCompleted)
        }
        return .created(Stored(record: record, answers: submission.answers, scores: scores))
    }

    /// A patient's responses, newest first, optionally for one instrument, or only those in `studies`.
    func responses(of patientID: UUID, instrumentKey: String? = nil, studies: Set<UUID>? = nil) async throws -> [Stored]
    {
        var query = ResponseRecord.query(on: database).filter(\.$patient.$id == patientID)
        if let instrumentKey { query = query.filter(\.$instrumentKey == instrumentKey) }
        if let studies { query = query.filter(\.$studyID ~~ Array(studies)) }
        return try await query.sort(\.$completedAt, .descending).all().map(open)
    }

    func response(_ id: UUID) async throws -> Stored? {
        try await ResponseRecord.find(id, on: database).map(open)
    }

    /// The response as a FHIR R4 QuestionnaireResponse, its subject the patient's pseudonym.
    func fhirDocument(of stored: Stored) async throws -> FHIR.QuestionnaireResponse {
        let record = stored.record
        guard
            let definition = try await InstrumentCatalog(database: database, services: services)
                .definition(record.instrumentKey, record.instrumentVersion)
        else { throw AppError.notFound }
        let settings = services.settings
        let pseudonym = try await PatientProfileRecord.query(on: database)
            .filter(\.$user.$id == record.$patient.id).first()?.pseudonym
        return definition.fhirResponse(
            id: try record.requireID().lowercasedText, answers: stored.answers,
            questionnaireURL: settings.questionnaireURL(definition.key), authored: record.completedAt,
            subject: pseudonym.map { FHIR.Identifier(system: settings.publicURL + "/pseudonym", value: $0) })
    }

    /// Answers as they are kept: JSON with the item ids in sorted order, sealed.
    package func seal(_ answers: Answers) throws -> String {
        try services.cipher.seal(
            FastPaths.storedJSON(SortedAnswers(answers: answers), fast: services.settings.apiFastPaths))
    }

    /// A stored response with its answers and scores unsealed.
    func open(_ record: ResponseRecord) throws -> Stored {
        let answers = try JSONDecoder().decode(Answers.self, from: Data(try services.cipher.open(record.answers).utf8))
        let scores = try JSONDecoder().decode(
            [ScoreResult].self, from: Data(try services.cipher.open(record.scores).utf8))
        return Stored(record: record, answers: answers, scores: scores)
    }

    /// Scores as they are kept: compact JSON (see `FastPaths.storedJSON`).
    package static func encode(_ scores: [ScoreResult], fast: Bool) throws -> String {
        try FastPaths.storedJSON(scores, fast: fast)
    }

    /// Answers keyed by item id, the ids in sorted order.
    private struct SortedAnswers: Encodable {
        let answers: Answers

        struct ItemKey: CodingKey {
            let stringValue: String
            var intValue: Int? { nil }
            init(stringValue: String) { self.stringValue = stringValue }
            init?(intValue: Int) { nil }
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: ItemKey.self)
            for (itemID, value) in answers.sorted(by: { $0.key < $1.key }) {
                try container.encode(value, forKey: ItemKey(stringValue: itemID))
            }
        }
    }

    /// Paradata and quality indices as they are stored: JSON with sorted keys.
    static func json(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    /// The quality indices stored with a response, nil for one stored before they were worked out.
    static func quality(of record: ResponseRecord) -> ResponseQuality? {
        record.quality.flatMap { try? JSONDecoder().decode(ResponseQuality.self, from: Data($0.utf8)) }
    }

    static func encode(_ context: AnswerContext) throws -> String {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        return String(decoding: try encoder.encode(context), as: UTF8.self)
    }

    /// The context kept with a response, opened.
    func context(of record: ResponseRecord) throws -> AnswerContext? {
        guard let sealed = record.context else { return nil }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return try decoder.decode(AnswerContext.self, from: Data(try services.cipher.open(sealed).utf8))
    }
}
