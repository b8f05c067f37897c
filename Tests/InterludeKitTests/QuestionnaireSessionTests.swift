import Foundation
import InterludeCore
import Testing

@testable import InterludeKit

/// The vectors in Tests/Vectors/instrument-logic.json, which InterludeCore and the web app's module are checked against
/// too: a native app answering through InterludeKit sees the same questions, progress, scores and refusals.
struct LogicVectors: Decodable {
    struct Score: Decodable, Sendable {
        var id: String
        var value: Double?
        var level: String?
    }

    struct Problem: Decodable, Hashable, Sendable {
        var field: String
        var code: String
    }

    struct Case: Decodable, Sendable, CustomTestStringConvertible {
        var name: String
        var answers: Answers
        var visibleSections: [String]
        var visibleItems: [String]
        var progress: [String: Int]
        var missingRequired: [String]
        var scores: [Score]
        var problems: [Problem]
        var testDescription: String { name }
    }

    var definition: InstrumentDefinition
    var cases: [Case]

    static let loaded: LogicVectors = {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Vectors/instrument-logic.json")
        return try! JSONDecoder().decode(LogicVectors.self, from: Data(contentsOf: url))
    }()
}

@Suite("Questionnaires answered offline through the SDK")
struct QuestionnaireSessionTests {
    /// A session on a prompt for the vectors' questionnaire, with `answers` given one by one into the store.
    static func session(_ answers: Answers) throws -> QuestionnaireSession {
        let store = try OfflineStore.inMemory()
        let definition = LogicVectors.loaded.definition
        let prompt = Prompt(
            id: UUID(), instrumentKey: definition.key, instrumentVersion: definition.version, title: "Vectors",
            opensAt: Date(timeIntervalSince1970: 1_780_000_000), closesAt: Date(timeIntervalSince1970: 1_780_090_000),
            status: .open,
            source: .schedule)
        try store.apply(
            ServerChanges(
                cursor: "c", full: true, prompts: [prompt], instruments: [definition], appointments: [],
                interventions: [], records: [],
                deleted: []), etag: "e")
        let session = try QuestionnaireSession(prompt: prompt.id, store: store)
        for (item, value) in answers { try session.answer(item, value, at: Date(timeIntervalSince1970: 1_780_000_100)) }
        return session
    }

    @Test("visibility, progress, missing answers, scores and problems", arguments: LogicVectors.loaded.cases)
    func vector(_ vector: LogicVectors.Case) throws {
        let session = try Self.session(vector.answers)
        let answers = try session.answers
        #expect(answers == vector.answers)
        let visibility = session.visibility(answers)
        #expect(visibility.sections == Set(vector.visibleSections))
        #expect(visibility.items == Set(vector.visibleItems))
        let progress = session.progress(answers)
        #expect([progress.answered, progress.total] == [vector.progress["answered"], vector.progress["total"]])
        #expect(session.missingRequired(answers) == vector.missingRequired)
        let scores = session.scores(answers)
        #expect(scores.map(\.id) == vector.scores.map(\.id))
        for (score, expected) in zip(scores, vector.scores) {
            #expect(score.value == expected.value && score.band?.level == expected.level, "score \(score.id)")
        }
        #expect(
            Set(session.problems(answers).map { LogicVectors.Problem(field: $0.field, code: $0.code.rawValue) })
                == Set(vector.problems))
        // Submitting leaves out answers to hidden questions and queues a response only for answers the server takes.
        if vector.missingRequired.isEmpty && vector.problems.allSatisfy({ $0.code == "notVisible" }) {
            let response = try session.submit(at: Date(timeIntervalSince1970: 1_780_000_200))
            #expect(response.answers.keys.allSatisfy(visibility.items.contains))
            #expect(session.problems(response.answers).isEmpty)
            #expect(response.startedAt == Date(timeIntervalSince1970: 1_780_000_100))
        } else {
            #expect(throws: InterludeKit.Problem.self) { try session.submit() }
        }
    }

    @Test("the time spent per item is kept as answers are given and sent with the response; a first answer has none")
    func itemTimes() throws {
        let vector = try #require(
            LogicVectors.loaded.cases.first {
                $0.missingRequired.isEmpty && $0.problems.isEmpty && $0.answers.count >= 2
            })
        let session = try Self.session([:])
        let items = vector.answers.keys.sorted()
        let start = Date(timeIntervalSince1970: 1_780_000_100)
        for (index, item) in items.enumerated() {
            try session.answer(item, vector.answers[item], at: start.addingTimeInterval(2.5 * Double(index)))
        }
        let last = try #require(items.last)
        try session.answer(last, vector.answers[last], at: start.addingTimeInterval(2.5 * Double(items.count - 1) + 1))

        let response = try session.submit(at: start.addingTimeInterval(60))

        var expected = Dictionary(uniqueKeysWithValues: items.dropFirst().map { ($0, 2500) })
        expected[last, default: 0] += 1000
        #expect(response.itemTimesMs == expected.filter { response.answers[$0.key] != nil })
        #expect(response.itemTimesMs?[items[0]] == nil)
        let sent = try JSONSerialization.jsonObject(with: JSONEncoder().encode(response)) as? [String: Any]
        #expect((sent?["itemTimesMs"] as? [String: Int])?[last] == 3500, "sent under the server's name")
    }
}
