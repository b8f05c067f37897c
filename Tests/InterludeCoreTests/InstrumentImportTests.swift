import Foundation
import Testing

@testable import InterludeCore

/// The instruments shipped in Resources/Instruments.
enum Library {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Resources/Instruments")

    static let keys = [
        "phq-9", "gad-7", "who-5", "pss-10", "intersession-daily", "isf-k", "tys-baseline", "tys-daily", "tys-weekly",
        "tys-monthly",
        "mood-vas", "tschq", "worst-symptom", "mini-tq",
    ]

    static func definition(_ key: String) throws -> InstrumentDefinition {
        try JSONDecoder().decode(
            InstrumentDefinition.self, from: Data(contentsOf: directory.appendingPathComponent("\(key).json")))
    }
}

@Suite("Instrument library and import")
struct InstrumentImportTests {
    @Test(
        "every library instrument is valid, states source and licence, and speaks German and English",
        arguments: Library.keys)
    func library(key: String) throws {
        let definition = try Library.definition(key)
        #expect(definition.key == key)
        #expect(definition.problems() == [], "\(definition.problems())")
        #expect(definition.source?.isEmpty == false)
        #expect(definition.licence?.isEmpty == false)
        for item in definition.items {
            #expect(item.text.values[.en] != nil && item.text.values[.de] != nil, "\(key).\(item.id)")
        }
    }

    @Test("PHQ-9: standard bands; item 9 counts; the difficulty question appears once any problem is reported")
    func phq9() throws {
        let phq = try Library.definition("phq-9")
        var answers: Answers = Dictionary(uniqueKeysWithValues: (1...9).map { ("phq9_\($0)", AnswerValue.text("0")) })
        #expect(!InstrumentLogic(phq).visibility(answers).items.contains("phq9_difficulty"))
        #expect(phq.scores(for: answers).first?.band?.level == "minimal")
        answers["phq9_9"] = .text("2")
        answers["phq9_2"] = .text("3")
        #expect(InstrumentLogic(phq).visibility(answers).items.contains("phq9_difficulty"))
        for (values, level) in [([3, 3, 3, 1, 0, 0, 0, 0, 0], "moderate"), ([3, 3, 3, 3, 3, 3, 2, 0, 0], "severe")] {
            let scored = Dictionary(
                uniqueKeysWithValues: values.enumerated().map {
                    ("phq9_\($0.offset + 1)", AnswerValue.text(String($0.element)))
                })
            #expect(phq.scores(for: scored).first?.band?.level == level)
        }
        let missingTwo = Dictionary(uniqueKeysWithValues: (1...7).map { ("phq9_\($0)", AnswerValue.text("2")) })
        #expect(phq.scores(for: missingTwo).first?.value == 18)  // 14 × 9/7
        let missingThree = Dictionary(uniqueKeysWithValues: (1...6).map { ("phq9_\($0)", AnswerValue.text("2")) })
        #expect(phq.scores(for: missingThree).first?.value == nil)
    }

    @Test("WHO-5 is reported as a percentage and PSS-10 reverses items 4, 5, 7 and 8")
    func who5AndPSS() throws {
        let who = try Library.definition("who-5")
        let all3 = Dictionary(uniqueKeysWithValues: (1...5).map { ("who5_\($0)", AnswerValue.text("3")) })
        #expect(who.scores(for: all3).first?.value == 60)
        #expect(who.scores(for: all3).first?.band?.level == "adequate")
        let pss = try Library.definition("pss-10")
        let allZero = Dictionary(uniqueKeysWithValues: (1...10).map { ("pss_\($0)", AnswerValue.text("0")) })
        #expect(pss.scores(for: allZero).first?.value == 16)
    }

    @Test("the Intersession-Daily asks how it felt only after a yes")
    func intersessionDaily() throws {
        let daily = try Library.definition("intersession-daily")
        let logic = InstrumentLogic(daily)
        #expect(logic.missingRequired(["thought": .bool(false)]) == [])
        #expect(logic.missingRequired(["thought": .bool(true)]) == ["feeling"])
        #expect(daily.problems(in: ["thought": .bool(false), "feeling": .text("4")]).map(\.code) == [.notVisible])
        #expect(daily.scores(for: ["thought": .bool(true), "feeling": .text("4")]).map(\.value) == [1, 4])
    }

    @Test(
        "the TSCHQ asks its 35 questions without a total; the worst symptom scores its burden and asks which one only for something else"
    )
    func tinnitusQuestionnaires() throws {
        let history = try Library.definition("tschq")
        #expect(history.items.count == 35)
        #expect(history.scores.isEmpty)
        let worst = try Library.definition("worst-symptom")
        let logic = InstrumentLogic(worst)
        #expect(logic.missingRequired(["worst": .text("sleep"), "burden": .number(7)]) == [])
        #expect(logic.missingRequired(["worst": .text("other"), "burden": .number(7)]) == ["worstOther"])
        #expect(
            worst.problems(in: ["worst": .text("sleep"), "worstOther": .text("x"), "burden": .number(7)]).map(\.code)
                == [.notVisible])
        #expect(worst.scores(for: ["worst": .text("sleep"), "burden": .number(7)]).map(\.value) == [7])
        let mini = try Library.definition("mini-tq")
        #expect(mini.items.count == 12 && mini.scores.isEmpty)
    }

    @Test("FHIR export and import keep items, conditions, scales and scoring", arguments: Library.keys)
    func fhirRoundTrip(key: String) throws {
        let original = try Library.definition(key)
        let exported = try JSONEncoder().encode(
            original.fhirQuestionnaire(canonicalURL: "https://interlude.test/fhir/Questionnaire/\(key)"))
        let imported = try FHIRQuestionnaireImport.definition(from: exported)
        #expect(imported.problems() == [])
        #expect(imported.key == original.key)
        #expect(imported.version == original.version)
        #expect(imported.items.map(\.id) == original.items.map(\.id))
        #expect(imported.items.map(\.required) == original.items.map(\.required))
        #expect(imported.title == original.title)
        #expect(imported.scores == original.scores)
        for (before, after) in zip(original.items, imported.items) {
            #expect(before.text == after.text)
            #expect(before.type == after.type, "\(key).\(before.id)")
            #expect(original.options(of: before) == imported.options(of: after))
        }
    }

    @Test("a FHIR questionnaire from elsewhere imports with its conditions")
    func fhirFromElsewhere() throws {
        let json = """
            {"resourceType": "Questionnaire", "name": "SleepCheck", "title": "Sleep check", "status": "draft",
             "item": [
               {"linkId": "1", "text": "Did you sleep well?", "type": "boolean", "required": true},
               {"linkId": "2", "text": "What kept you awake?", "type": "choice", "repeats": true,
                "enableWhen": [{"question": "1", "operator": "=", "answerBoolean": false}],
                "answerOption": [{"valueCoding": {"code": "noise", "display": "Noise"}}, {"valueString": "Worries"},
                                 {"valueCoding": {"code": "none", "display": "Nothing"}, "extension": [{"url": "http://hl7.org/fhir/StructureDefinition/questionnaire-optionExclusive", "valueBoolean": true}]}]},
               {"linkId": "3", "text": "Hours slept", "type": "decimal",
                "extension": [{"url": "http://hl7.org/fhir/StructureDefinition/minValue", "valueDecimal": 0},
                              {"url": "http://hl7.org/fhir/StructureDefinition/maxValue", "valueDecimal": 24}]}]}
            """
        let definition = try FHIRQuestionnaireImport.definition(from: Data(json.utf8))
        #expect(definition.key == "sleepcheck")
        #expect(definition.problems() == [])
        #expect(definition.items.map(\.type) == [.boolean, .multiple, .number])
        #expect(definition.items[1].options?.last?.exclusive == true)
        #expect(InstrumentLogic(definition).missingRequired([:]) == ["1"])
        #expect(InstrumentLogic(definition).visibility(["1": .bool(false)]).items.contains("2"))
        #expect(!InstrumentLogic(definition).visibility(["1": .bool(true)]).items.contains("2"))
    }

    @Test("FHIR that Interlude cannot run is refused, naming the item")
    func brokenFHIR() throws {
        let attachment =
            #"{"resourceType": "Questionnaire", "name": "X", "item": [{"linkId": "photo", "text": "Photo", "type": "attachment"}]}"#
        #expect(
            throws: ValidationFailure([
                FieldError(field: "item[0].type", code: .unsupportedItemType, detail: "attachment")
            ])
        ) {
            try FHIRQuestionnaireImport.definition(from: Data(attachment.utf8))
        }
        let valueSet =
            #"{"resourceType": "Questionnaire", "name": "X", "item": [{"linkId": "c", "text": "C", "type": "choice", "answerValueSet": "http://x"}]}"#
        #expect(
            throws: ValidationFailure([
                FieldError(field: "item[0].answerValueSet", code: .externalValueSet, detail: "http://x")
            ])
        ) {
            try FHIRQuestionnaireImport.definition(from: Data(valueSet.utf8))
        }
        #expect(throws: ValidationFailure(field: "resourceType", code: .invalidValue)) {
            try FHIRQuestionnaireImport.definition(from: Data(#"{"resourceType": "Patient"}"#.utf8))
        }
        #expect(throws: ValidationFailure(field: "questionnaire", code: .invalidFormat)) {
            try FHIRQuestionnaireImport.definition(from: Data("not json".utf8))
        }
    }

    @Test("CSV fields may hold commas, quotes and line breaks")
    func csv() {
        #expect(
            CSV.parse("a,\"b, c\",\"say \"\"hi\"\"\"\r\nline,\"two\nlines\",\n") == [
                ["a", "b, c", "say \"hi\""], ["line", "two\nlines", ""],
            ])
    }
}

@Suite("Track Your Stress: the one-time and the monthly questionnaires")
struct TrackYourStressInstrumentTests {
    static func answers(_ values: [Int], prefix: String) -> Answers {
        Dictionary(
            uniqueKeysWithValues: values.enumerated().map {
                ("\(prefix)\($0.offset + 1)", AnswerValue.text(String($0.element)))
            })
    }

    @Test("the monthly index reverses the positively worded statements and scales the mean to 0–100")
    func monthly() throws {
        let monthly = try Library.definition("tys-monthly")
        #expect(monthly.items.count == 20)
        #expect(monthly.items.allSatisfy { $0.type == .single && monthly.options(of: $0).count == 4 })
        // Every statement answered "often" (2): the negative ones count 2, the positive ones 3 − 2 = 1;
        // (12 × 2 + 8 × 1) / 20 = 1.6, × 100/3 = 53.
        let often = Self.answers(Array(repeating: 2, count: 20), prefix: "psq_")
        let score = try #require(monthly.scores(for: often).first)
        #expect(score.value == 53)
        #expect(score.band?.level == "medium")
        // The most stressed answers: the negative ones "most of the time", the positive ones "almost never".
        let positive: Set = [1, 4, 6, 8, 12, 14, 16, 19]
        let worst = Self.answers((1...20).map { positive.contains($0) ? 0 : 3 }, prefix: "psq_")
        #expect(monthly.scores(for: worst).first?.value == 100)
        #expect(monthly.scores(for: worst).first?.band?.level == "high")
    }

    @Test(
        "the one-time questionnaire has 111 items, choices of 4 to 6 options and sliders 0–6, the CTQ as optional structure"
    )
    func baseline() throws {
        let baseline = try Library.definition("tys-baseline")
        let items = baseline.items
        #expect(items.count == 111)
        for item in items {
            switch item.type {
            case .single: #expect((4...6).contains(baseline.options(of: item).count), "\(item.id)")
            case .slider: #expect(item.min == 0 && item.max == 6 && item.step == 1, "\(item.id)")
            default: Issue.record("\(item.id) is a \(item.type)")
            }
        }
        let childhood = items.filter { $0.id.hasPrefix("ctq_") }
        #expect(childhood.count == 28 && childhood.allSatisfy { !$0.required })
        #expect(items.filter { $0.type == .slider }.count == 21)
        #expect(
            !baseline.scores.contains { $0.items.contains { $0.hasPrefix("ctq_") } },
            "the CTQ's scoring comes with its licence")
    }

    @Test(
        "the one-time questionnaire's scores: stress sums, coping with the never-would statement reversed, PSS-4 and WHO-5"
    )
    func baselineScores() throws {
        let baseline = try Library.definition("tys-baseline")
        var answers: Answers = [:]
        for item in baseline.items where item.type == .slider {
            answers[item.id] = .number(item.id.hasPrefix("losses_") ? 6 : 1)
        }
        for item in baseline.items where item.id.hasPrefix("symptom_") { answers[item.id] = .text("2") }
        for item in baseline.items where item.id.hasPrefix("coping_") { answers[item.id] = .text("4") }
        for (id, code) in [("no_influence", "4"), ("confident", "0"), ("going_well", "0"), ("piling_up", "4")] {
            answers[id] = .text(code)
        }
        for index in 1...20 { answers["psq_\(index)"] = .text("2") }
        for index in 1...5 { answers["who5_\(index)"] = .text("3") }
        let scores = Dictionary(uniqueKeysWithValues: baseline.scores(for: answers).map { ($0.id, $0.value) })
        #expect(scores["stress_uncertainty"] == 7 && scores["stress_overload"] == 7 && scores["stress_losses"] == 42)
        #expect(scores["stress_total"] == 56)
        #expect(scores["symptoms"] == 26)
        #expect(scores["coping_positive"] == 16 && scores["coping_faith"] == 16)
        #expect(scores["coping_substances"] == 13, "4 + 4 + 4 and the never-would statement reversed to 1")
        #expect(scores["lastWeek"] == 16)
        #expect(scores["perceivedStress"] == 53)
        #expect(scores["wellbeing"] == 60)
    }
}
