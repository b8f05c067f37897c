import Foundation
import PropertyBased
import Testing

@testable import InterludeCore

/// No number, however extreme, may stop the process: every formatting and conversion of a Double is total, and
/// every number that enters is refused at the door when it is not finite or out of range.
@Suite("Numbers: extreme values never trap, and are refused at the door")
struct NumberSafetyTests {
    static let extremes: [Double] = [
        1e308, -1e308, .greatestFiniteMagnitude, -.greatestFiniteMagnitude, .infinity, -.infinity, .nan, -0.0, 0,
        9_223_372_036_854_775_808, -9_223_372_036_854_775_808, 9_223_372_036_854_775_807, 1e15, -1e15, 1e300,
        .leastNonzeroMagnitude, -.leastNonzeroMagnitude, 0.1, -2.5, 1e9, -1e9, 1e9 + 1,
    ]

    @Test("plain text and whole numbers of the extreme values", arguments: extremes)
    func extremeFormatting(value: Double) {
        // act
        let text = value.plainText()
        let whole = value.clampedInt
        // verify
        #expect(!text.isEmpty)
        #expect((whole == nil) == value.isNaN)
        if value.isFinite, abs(value) < 1e15, value == value.rounded() {
            #expect(Int(text) == whole, "\(value) printed as \(text)")
        }
    }

    @Test("any bit pattern formats and converts without trapping")
    func randomBitPatterns() async {
        await propertyCheck(count: 2000, input: Gen.int(in: Int.min...Int.max)) { bits in
            let value = Double(bitPattern: UInt64(bitPattern: Int64(bits)))
            #expect(!value.plainText().isEmpty)
            #expect(!value.plainText(decimals: 6).isEmpty)
            #expect((value.clampedInt == nil) == value.isNaN)
        }
    }

    @Test("numbers print as people read them")
    func readableText() {
        #expect(15.0.plainText() == "15")
        #expect(2.5.plainText() == "2.5")
        #expect(2.125.plainText() == "2.13" || 2.125.plainText() == "2.12")
        #expect((-0.0).plainText() == "0")
        #expect((-0.001).plainText() == "0")
        #expect(1e300.plainText() == "1e+300")
        #expect(Double.infinity.plainText() == "∞")
    }

    @Test("a rule compares and explains extreme values without trapping", arguments: extremes)
    func ruleWithExtremes(value: Double) {
        // setup: a stored rule and a response that both carry the value, as a rule saved before the door checked
        let rule = StudyRule(
            name: "extreme",
            trigger: .submitted(
                instrumentKey: "x",
                condition: RuleCondition(
                    mode: .any,
                    clauses: [
                        RuleClause(subject: .score, id: "total", operator: .greaterOrEqual, value: value),
                        RuleClause(subject: .item, id: "a", operator: .lessOrEqual, value: value),
                    ])),
            action: .alert(priority: .normal, message: "look"))
        let facts = ResponseFacts(instrumentKey: "x", items: ["a": value], scores: ["total": value], bands: [:])
        // act
        let match = rule.evaluate(facts)
        // verify
        if !value.isNaN { #expect(match?.reason.contains("extreme") == true) }
    }

    @Test("a rule's comparison value must be finite and within ±1e9", arguments: [1e300, Double.infinity, -1e10])
    func ruleValueAtTheDoor(value: Double) throws {
        // setup
        let definition = Self.numberInstrument()
        let rule = StudyRule(
            name: "too big",
            trigger: .submitted(
                instrumentKey: "numbers",
                condition: RuleCondition(
                    mode: .all, clauses: [RuleClause(subject: .item, id: "n", operator: .greater, value: value)])),
            action: .alert(priority: .normal, message: "look"))
        // act
        let refusal = #expect(throws: ValidationFailure.self) {
            try StudyRule.validate(rule, instruments: ["numbers": definition])
        }
        // verify
        #expect(refusal?.errors.map(\.field) == ["trigger.condition.clauses.0.value"])
        #expect(refusal?.errors.first?.code == .outOfRange)
    }

    @Test("the same rule with an ordinary value is accepted")
    func ruleValueAccepted() throws {
        let rule = StudyRule(
            name: "fine",
            trigger: .submitted(
                instrumentKey: "numbers",
                condition: RuleCondition(
                    mode: .all, clauses: [RuleClause(subject: .item, id: "n", operator: .greater, value: 1e9)])),
            action: .alert(priority: .normal, message: "look"))
        #expect(throws: Never.self) { try StudyRule.validate(rule, instruments: ["numbers": Self.numberInstrument()]) }
    }

    @Test(
        "an instrument's bounds, option scores, factors and bands must be finite and within ±1e9",
        arguments: [
            "sections.0.items.0.min", "sections.0.items.0.max", "sections.0.items.0.step",
            "sections.0.items.1.options.0.score", "sections.0.items.1.options.1.code", "scores.0.factor",
            "scores.0.bands.0.min",
        ])
    func definitionNumbersAtTheDoor(field: String) {
        // setup
        var definition = Self.numberInstrument()
        #expect(definition.problems().isEmpty, "\(definition.problems())")
        // act
        switch field {
        case "sections.0.items.0.min": definition.sections[0].items[0].min = -.infinity
        case "sections.0.items.0.max": definition.sections[0].items[0].max = 1e300
        case "sections.0.items.0.step": definition.sections[0].items[0].step = .nan
        case "sections.0.items.1.options.0.score": definition.sections[0].items[1].options?[0].score = 1e12
        case "sections.0.items.1.options.1.code": definition.sections[0].items[1].options?[1].code = "1e400"
        case "scores.0.factor": definition.scores[0].factor = 1e10
        default: definition.scores[0].bands[0].min = -.infinity
        }
        // verify
        #expect(definition.problems().map(\.field).contains(field), "\(definition.problems())")
    }

    @Test("an answer to a number item without bounds must lie within ±1e9", arguments: [1e300, -1e10, 1e9 + 1])
    func answerAtTheDoor(value: Double) {
        let definition = Self.numberInstrument()
        let refusal = #expect(throws: ValidationFailure.self) { try definition.validate(["n": .number(value)]) }
        #expect(refusal?.errors.map(\.field) == ["answers.n"])
        #expect(throws: Never.self) { try definition.validate(["n": .number(1e9)]) }
    }

    @Test("a stored answer of any size scores and maps to FHIR without trapping", arguments: extremes)
    func storedExtremeAnswer(value: Double) {
        let definition = Self.numberInstrument()
        let answers: Answers = ["n": .number(value), "c": .text("1")]
        _ = definition.scores(for: answers)
        let response = definition.fhirResponse(
            id: "r", answers: answers, questionnaireURL: "https://example.org/q",
            authored: Date(timeIntervalSince1970: 0),
            subject: nil)
        #expect(response.item?.isEmpty == false)
    }

    /// A number item without bounds, a choice item with scored options, and a score with bands.
    static func numberInstrument() -> InstrumentDefinition {
        let options = [
            AnswerOption(code: "0", label: "no"), AnswerOption(code: "1", label: "yes"),
        ]
        return InstrumentDefinition(
            key: "numbers", version: 1, title: "Numbers",
            sections: [
                Section(
                    id: "s",
                    items: [
                        Item(id: "n", type: .number, text: "How many?"),
                        Item(id: "c", type: .single, text: "Yes?", options: options),
                    ])
            ],
            scores: [
                ScoreRule(
                    id: "total", title: "Total", method: .sum, items: ["c"],
                    bands: [Band(min: 0, max: 0, label: "none"), Band(min: 1, max: 1, label: "some")])
            ])
    }
}
