import Foundation
import Testing

@testable import InterludeCore

/// The vectors in Tests/Vectors/instrument-logic.json, which the patient app's JS module is tested against too.
struct InstrumentVectors: Decodable {
    struct ExpectedScore: Decodable {
        var id: String
        var value: Double?
        var level: String?
    }

    struct ExpectedProblem: Decodable, Hashable {
        var field: String
        var code: String
        var limit: Int?
    }

    struct Case: Decodable, CustomTestStringConvertible, Sendable {
        var name: String
        var answers: Answers
        var visibleSections: [String]
        var visibleItems: [String]
        var progress: [String: Int]
        var missingRequired: [String]
        var scores: [ExpectedScore]
        var problems: [ExpectedProblem]

        var testDescription: String { name }
    }

    var definition: InstrumentDefinition
    var cases: [Case]

    static let loaded: InstrumentVectors = {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Vectors/instrument-logic.json")
        return try! JSONDecoder().decode(InstrumentVectors.self, from: Data(contentsOf: url))
    }()
}

extension InstrumentVectors.ExpectedScore: Sendable {}
extension InstrumentVectors.ExpectedProblem: Sendable {}

@Suite("Instrument logic on the shared vectors")
struct InstrumentVectorTests {
    @Test("the vector definition is itself valid")
    func definitionIsValid() {
        #expect(InstrumentVectors.loaded.definition.problems() == [])
    }

    @Test("visibility, progress, missing items, scores and problems", arguments: InstrumentVectors.loaded.cases)
    func vector(_ vector: InstrumentVectors.Case) {
        let definition = InstrumentVectors.loaded.definition
        let logic = InstrumentLogic(definition)
        let visibility = logic.visibility(vector.answers)
        #expect(visibility.sections == Set(vector.visibleSections))
        #expect(visibility.items == Set(vector.visibleItems))
        let progress = logic.progress(vector.answers)
        #expect(progress.answered == vector.progress["answered"])
        #expect(progress.total == vector.progress["total"])
        #expect(logic.missingRequired(vector.answers) == vector.missingRequired)
        let scores = definition.scores(for: vector.answers)
        #expect(scores.map(\.id) == vector.scores.map(\.id))
        for (score, expected) in zip(scores, vector.scores) {
            #expect(score.value == expected.value, "score \(score.id)")
            #expect(score.band?.level == expected.level, "band of \(score.id)")
        }
        let problems = Set(
            definition.problems(in: vector.answers).map {
                InstrumentVectors.ExpectedProblem(field: $0.field, code: $0.code.rawValue, limit: $0.limit)
            })
        #expect(problems == Set(vector.problems))
        // Validating and scoring at once gives the same scores, or refuses with the same problems.
        do {
            let together = try definition.validatedScores(for: vector.answers)
            #expect(vector.problems.isEmpty)
            #expect(together == scores)
        } catch {
            #expect(error.errors == definition.problems(in: vector.answers))
        }
    }
}

/// The vectors in Tests/Vectors/instrument-conditions.json: conditions with at least, at most, groups and items
/// that depend on each other, which the patient app's JS module is tested against too.
struct ConditionVectors: Decodable {
    struct Case: Decodable, CustomTestStringConvertible, Sendable {
        var name: String
        var answers: Answers
        var visibleItems: [String]
        var missingRequired: [String]

        var testDescription: String { name }
    }

    var definition: InstrumentDefinition
    var cases: [Case]

    static let loaded: ConditionVectors = {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Vectors/instrument-conditions.json")
        return try! JSONDecoder().decode(ConditionVectors.self, from: Data(contentsOf: url))
    }()
}

@Suite("Conditions on the shared vectors")
struct ConditionVectorTests {
    @Test("the vector definition is itself valid, its pair of items depending on each other included")
    func definitionIsValid() {
        #expect(ConditionVectors.loaded.definition.problems() == [])
    }

    @Test("visible items and missing required items", arguments: ConditionVectors.loaded.cases)
    func vector(_ vector: ConditionVectors.Case) {
        let logic = InstrumentLogic(ConditionVectors.loaded.definition)
        #expect(logic.visibility(vector.answers).items == Set(vector.visibleItems))
        #expect(logic.missingRequired(vector.answers) == vector.missingRequired)
    }
}
