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
        #expect(throws: ValidationFailure(field: "item.0.type", code: .notAllowed)) {
            try FHIRQuestionnaireImport.definition(from: Data(attachment.utf8))
        }
        let valueSet =
            #"{"resourceType": "Questionnaire", "name": "X", "item": [{"linkId": "c", "text": "C", "type": "choice", "answerValueSet": "http://x"}]}"#
        #expect(throws: ValidationFailure(field: "item.0.answerOption", code: .notAllowed)) {
            try FHIRQuestionnaireImport.definition(from: Data(valueSet.utf8))
        }
        #expect(throws: ValidationFailure(field: "resourceType", code: .invalidValue)) {
            try FHIRQuestionnaireImport.definition(from: Data(#"{"resourceType": "Patient"}"#.utf8))
        }
        #expect(throws: ValidationFailure(field: "questionnaire", code: .invalidFormat)) {
            try FHIRQuestionnaireImport.definition(from: Data("not json".utf8))
        }
    }

    static let redcap = #"""
        Variable / Field Name,Form Name,Section Header,Field Type,Field Label,"Choices, Calculations, OR Slider Labels",Field Note,Text Validation Type OR Show Slider Number,Text Validation Min,Text Validation Max,Identifier?,Branching Logic (Show field only if...),Required Field?,Custom Alignment,Question Number (surveys only),Matrix Group Name,Matrix Ranking?,Field Annotation
        slept_well,sleep_diary,,yesno,Did you sleep well?,,,,,,,,y,,,,,
        awake_reasons,sleep_diary,,checkbox,What kept you awake?,"1, Noise | 2, Worries | 3, Pain, mostly",,,,,,[slept_well] = '0',,,,,,
        worry_note,sleep_diary,,notes,<b>Describe</b> your worries,,,,,,,[awake_reasons(2)] = '1',,,,,,
        hours,sleep_diary,Details,text,Hours slept,,,number,0,24,,,y,,,,,
        rested,sleep_diary,,slider,How rested?,Not at all | | Fully,,,,,,,,,,,,
        mood_1,sleep_diary,,radio,Morning,"0, bad | 1, ok | 2, good",,,,,,,y,,,mood,,
        mood_2,sleep_diary,,radio,Evening,"0, bad | 1, ok | 2, good",,,,,,[hours] > 6 or [rested] < 20,y,,,mood,,
        """#

    @Test("a REDCap data dictionary imports with sections, matrix groups, choices and branching logic")
    func redcapImport() throws {
        let definition = try REDCapImport.definition(fromCSV: Self.redcap)
        #expect(definition.key == "sleep-diary")
        #expect(definition.problems() == [], "\(definition.problems())")
        #expect(definition.sections.count == 3)
        #expect(definition.sections[2].id == "mood")
        #expect(definition.sections[2].options?.count == 3)
        #expect(definition.items.map(\.type) == [.boolean, .multiple, .text, .number, .slider, .single, .single])
        #expect(definition.item("awake_reasons")?.options?.last?.label.text(.en) == "Pain, mostly")
        #expect(definition.item("worry_note")?.text.text(.en) == "Describe your worries")
        #expect(definition.item("rested")?.maxLabel?.text(.en) == "Fully")
        let logic = InstrumentLogic(definition)
        #expect(logic.visibility(["slept_well": .bool(false)]).items.contains("awake_reasons"))
        #expect(!logic.visibility(["slept_well": .bool(true)]).items.contains("awake_reasons"))
        #expect(
            logic.visibility(["slept_well": .bool(false), "awake_reasons": .list(["2"])]).items.contains("worry_note"))
        #expect(logic.visibility(["hours": .number(7)]).items.contains("mood_2"))
        #expect(!logic.visibility(["hours": .number(5), "rested": .number(50)]).items.contains("mood_2"))
    }

    @Test("line breaks in REDCap choices, as spreadsheets leave them, are no part of the codes or labels")
    func redcapLineBreaks() throws {
        let header = Self.redcap.split(separator: "\n").first!
        let row =
            "often,f,,radio,How often?,\"1, Never\r\n| 2, Sometimes\r\n|\r\n3,Often\r\",,,,,,,,,,,,\n"
            + "rested,f,,slider,How rested?,\"Not at all\r\n| |\r\nFully\r\",,,,,,,,,,,,"
        let definition = try REDCapImport.definition(fromCSV: header + "\n" + row)
        let often = try #require(definition.item("often"))
        #expect(often.options?.map(\.code) == ["1", "2", "3"])
        #expect(often.options?.map { $0.label.text(.en) } == ["Never", "Sometimes", "Often"])
        #expect(definition.item("rested")?.minLabel?.text(.en) == "Not at all")
        #expect(definition.item("rested")?.maxLabel?.text(.en) == "Fully")
    }

    @Test("broken REDCap dictionaries are refused row by row")
    func brokenREDCap() throws {
        let header = Self.redcap.split(separator: "\n").first!
        func problems(_ rows: String) -> [String] {
            do {
                _ = try REDCapImport.definition(fromCSV: header + "\n" + rows)
                return []
            } catch {
                return error.errors.map { "\($0.field) \($0.code.rawValue)" }
            }
        }
        #expect(problems("a,f,,calc,Sum,[x]+[y],,,,,,,,,,,,") == ["row.2.fieldType notAllowed"])
        #expect(problems("a,f,,radio,Pick,no choices here,,,,,,,,,,,,") == ["row.2.choices invalidFormat"])
        #expect(
            problems("a,f,,yesno,A,,,,,,,,,,,,,\nb,f,,text,B,,,,,,,([a] = '1' and [a] = '0') or [a] = '',,,,,,") == [
                "row.3.branchingLogic invalidFormat"
            ])
        #expect(
            problems("a,f,,text,A,,,,,,,,,,,,,\nb,other_form,,text,B,,,,,,,,,,,,,") == ["row.3.formName notAllowed"])
        #expect(throws: ValidationFailure(field: "csv.header", code: .invalidFormat)) {
            try REDCapImport.definition(fromCSV: "just,some,columns\n1,2,3")
        }
    }

    @Test(
        "branching logic is read in one pass: any spacing, joiners inside quotes, and at-least or at-most refused, not misread"
    )
    func branchingRead() throws {
        let types = ["a": "radio", "b": "radio", "n": "text"]
        let spaced = "[a] = '1'" + String(repeating: " ", count: 32_000) + "and   [b] = '2'"
        #expect(
            try REDCapBranching.condition(spaced, fieldTypes: types)
                == Condition(
                    .all,
                    [
                        Clause(item: "a", .equals, .text("1")), Clause(item: "b", .equals, .text("2")),
                    ]))
        #expect(
            try REDCapBranching.condition("[a] = 'salt and pepper' OR [b] <> ''", fieldTypes: types)
                == Condition(
                    .any,
                    [
                        Clause(item: "a", .equals, .text("salt and pepper")), Clause(item: "b", .answered, .bool(true)),
                    ]))
        for unsupported in [
            "[n] >= '2'", "[n] <= 3", "[a] = '1' and [b] = '1' or [n] > 2", "([a] = '1')", "[a(2)] = '0'", "[a] =", "",
        ] {
            #expect(throws: REDCapBranching.Unsupported.self, "\(unsupported)") {
                try REDCapBranching.condition(unsupported, fieldTypes: types)
            }
        }
        // 32 000 spaces without a joiner, and a thousand joiners, are read as the text they are.
        #expect(throws: REDCapBranching.Unsupported.self) {
            try REDCapBranching.condition("[a]" + String(repeating: " ", count: 32_000) + "x", fieldTypes: types)
        }
        let many = Array(repeating: "[n] > 1", count: 1000).joined(separator: " or ")
        #expect(try REDCapBranching.condition(many, fieldTypes: types).clauses.count == 1000)
    }

    @Test("tags leave labels in one pass; a lone '<' stays")
    func tagsRemoved() {
        #expect(REDCapText.plain("<b>Describe</b> your <span style='x'>worries</span>") == "Describe your worries")
        #expect(REDCapText.plain("Fewer than 3 <i>days</i>: pick < 3") == "Fewer than 3 days: pick < 3")
        #expect(REDCapText.plain(String(repeating: "<", count: 50_000)) == String(repeating: "<", count: 50_000))
    }

    @Test("a cell, a branching logic or a file beyond its cap is refused by place; a spent budget refuses the file")
    func capsAndBudget() throws {
        let header = Self.redcap.split(separator: "\n").first!
        func problems(_ rows: String, budget: WorkBudget = .unlimited) -> [String] {
            do {
                _ = try REDCapImport.definition(fromCSV: header + "\n" + rows, budget: budget)
                return []
            } catch {
                return error.errors.map { "\($0.field) \($0.code.rawValue)" }
            }
        }
        let long = String(repeating: "x", count: REDCapImport.maxCellLength + 1)
        #expect(problems("a,f,,text,\(long),,,,,,,,,,,,,") == ["row.2.label tooLong"])
        let logic = Array(repeating: "[a] = '1'", count: 300).joined(separator: " and ")
        #expect(
            problems("a,f,,yesno,A,,,,,,,,,,,,,\nb,f,,text,B,,,,,,,\(logic),,,,,,") == ["row.3.branchingLogic tooLong"])
        let rows = (0...REDCapImport.maxRows).map { "v\($0),f,,text,V,,,,,,,,,,,,," }.joined(separator: "\n")
        #expect(problems(rows) == ["csv tooLong"])
        #expect(problems("a,f,,text,A,,,,,,,,,,,,,", budget: WorkBudget(.zero)) == ["csv tooComplex"])
        #expect(problems("a,f,,text,A,,,,,,,,,,,,,", budget: WorkBudget(.seconds(60))) == [])
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
