import Foundation
import InterludeCore

/// One questionnaire being answered on the device, online or not, by the same rules the server and the web app apply
/// (InterludeCore, checked against the shared vectors): which sections and questions show, how far the person is,
/// what is still required, what the answers are worth, and what the server would refuse. Every answer is kept in the
/// store the moment it is given; `submit` queues the response for the next sync.
public struct QuestionnaireSession: Sendable {
    public let prompt: Prompt
    public let definition: InstrumentDefinition
    private let store: OfflineStore
    private let logic: InstrumentLogic

    /// Opens a prompt the device holds, with the questionnaire it needs and the answers given so far.
    public init(prompt promptID: UUID, store: OfflineStore) throws {
        guard let prompt = try store.prompt(promptID) else { throw Problem.notOnDevice("prompt") }
        guard let definition = try store.definition(key: prompt.instrumentKey, version: prompt.instrumentVersion) else {
            throw Problem.notOnDevice("definition")
        }
        self.init(prompt: prompt, definition: definition, store: store)
    }

    public init(prompt: Prompt, definition: InstrumentDefinition, store: OfflineStore) {
        self.prompt = prompt
        self.definition = definition
        self.store = store
        logic = InstrumentLogic(definition)
    }

    public var answers: Answers {
        get throws { try store.draft(for: prompt.id)?.answers ?? [:] }
    }

    /// Keeps an answer at once (nil takes it back).
    public func answer(_ item: String, _ value: AnswerValue?, at now: Date = SystemTime.now()) throws {
        try store.saveAnswer(value, item: item, prompt: prompt.id, at: now)
    }

    public func visibility(_ answers: Answers) -> Visibility { logic.visibility(answers) }
    public func progress(_ answers: Answers) -> (answered: Int, total: Int) { logic.progress(answers) }
    public func missingRequired(_ answers: Answers) -> [String] { logic.missingRequired(answers) }
    public func scores(_ answers: Answers) -> [ScoreResult] { definition.scores(for: answers) }
    /// What the server would refuse in these answers (out of range, not an option, too long, …).
    public func problems(_ answers: Answers) -> [FieldError] { definition.problems(in: answers) }

    /// Queues the response with the answers kept so far, once nothing required is missing and nothing would be
    /// refused; the prompt shows as done at once. The answers of hidden questions are not sent.
    @discardableResult
    public func submit(at now: Date = SystemTime.now()) throws -> ResponseSubmission {
        let draft = try store.draft(for: prompt.id)
        let given = draft?.answers ?? [:]
        let visible = logic.visibility(given).items
        let answers = given.filter { visible.contains($0.key) }
        let missing = logic.missingRequired(answers)
        let problems = definition.problems(in: answers)
        guard missing.isEmpty, problems.isEmpty else {
            throw Problem(
                type: "/problems/validation", title: "The answers are not complete", status: 422,
                fields: missing.map { .init(field: "answers.\($0)", code: "required", detail: "") }
                    + problems.map { .init(field: "answers.\($0.field)", code: $0.code.rawValue, detail: "") })
        }
        let times = draft?.itemTimesMs.filter { answers[$0.key] != nil } ?? [:]
        let response = ResponseSubmission(
            promptID: prompt.id, instrumentKey: prompt.instrumentKey, version: prompt.instrumentVersion,
            answers: answers, startedAt: draft?.startedAt, completedAt: now, itemTimesMs: times.isEmpty ? nil : times)
        try store.enqueue(.response(response), label: prompt.title, at: now)
        return response
    }
}

extension Problem {
    static func notOnDevice(_ what: String) -> Problem {
        Problem(type: "/problems/not-on-device", title: "Not on this device yet; sync first", status: 404, detail: what)
    }
}
