import Foundation
import Testing

@testable import InterludeCore

@Suite("FHIR Questionnaires from the field: linkIds, value sets, expressions, calculations, bounds")
struct FHIRImportTests {
    static func read(_ json: String) throws -> FHIRQuestionnaireImport.Result {
        try FHIRQuestionnaireImport.read(from: Data(json.utf8))
    }

    @Test("a linkId FHIR allows is kept as written and mapped to an id; exports name it as the file did")
    func linkIds() throws {
        let result = try Self.read(
            #"""
            {"resourceType": "Questionnaire", "name": "Slashes", "item": [
              {"linkId": "/29463-7", "type": "decimal", "text": "Weight"},
              {"linkId": "/29463-7/unit", "type": "string", "text": "Unit",
               "enableWhen": [{"question": "/29463-7", "operator": ">=", "answerDecimal": 1}]},
              {"linkId": "1.1", "type": "boolean", "text": "Plain"}]}
            """#)
        let definition = result.definition
        #expect(definition.items.map(\.id) == ["29463-7", "29463-7_unit", "1.1"])
        #expect(definition.items.map(\.linkId) == ["/29463-7", "/29463-7/unit", nil])
        #expect(
            definition.item("29463-7_unit")?.visibleWhen
                == Condition(.all, [Clause(item: "29463-7", .atLeast, .number(1))]))
        let exported = definition.fhirQuestionnaire(canonicalURL: "https://x.example/q").item?.first?.item ?? []
        #expect(exported.map(\.linkId) == ["/29463-7", "/29463-7/unit", "1.1"])
        #expect(exported[1].enableWhen?.first?.question == "/29463-7")
        let response = definition.fhirResponse(
            id: "r", answers: ["29463-7": .number(70), "29463-7_unit": .text("kg")],
            questionnaireURL: "https://x.example/q", authored: Date(timeIntervalSince1970: 0), subject: nil)
        #expect(response.item?.first?.item?.map(\.linkId) == ["/29463-7", "/29463-7/unit"])
        #expect(FHIRQuestionnaireImport.id(for: "/a", taken: ["a"]) == "a-2")
        #expect(FHIRQuestionnaireImport.id(for: "//", taken: []) == "item")
    }

    @Test(
        "enableWhenExpression in the FHIRPath questionnaires use becomes a condition, or the file is refused naming it")
    func expressions() throws {
        let variables: FHIRPathReading.Variables = [
            "%sex": try FHIRPathReading.parse("%resource.item.where(linkId='sex').answer.value")
        ]
        func read(_ text: String) throws -> Condition {
            try FHIRPathReading.condition(FHIRPathReading.parse(text), variables: variables)
        }
        #expect(try read("%sex.code = 'female'") == Condition(.all, [Clause(item: "sex", .equals, .text("female"))]))
        #expect(
            try read(
                "%resource.repeat(item).where(linkId = 'a').answer.exists().not() or %resource.item.where(linkId='g').item.where(linkId='b').answer.value > 3"
            )
                == Condition(
                    .any, [Clause(item: "a", .answered, .bool(false)), Clause(item: "b", .greater, .number(3))]))
        #expect(
            try read(
                "3 <= %resource.item.where(linkId='n').answer.value and (%sex.code != 'male' or %resource.item.where(linkId='x').answer.empty())"
            )
                == Condition(
                    .all, [Clause(item: "n", .atLeast, .number(3))],
                    groups: [
                        Condition(
                            .any,
                            [
                                Clause(item: "sex", .notEquals, .text("male")),
                                Clause(item: "x", .answered, .bool(false)),
                            ])
                    ]))
        #expect(
            try read("%resource.item.where(linkId='d').answer.value < @2026-01-31")
                == Condition(.all, [Clause(item: "d", .less, .text("2026-01-31"))]))
        for unsupported in [
            "%patient.gender = 'female'", "today() > %resource.item.where(linkId='d').answer.value",
            "%resource.item.where(linkId='a').answer.value = %resource.item.where(linkId='b').answer.value",
            "%resource.item.where(text='A').answer.exists()", "iif(true, true, false)", "'a' = 'a'", "(",
        ] {
            #expect(throws: FHIRPathReading.Unsupported.self, "\(unsupported)") { try read(unsupported) }
        }
        #expect(
            throws: ValidationFailure([
                FieldError(
                    field: "item[0].extension(enableWhenExpression)", code: .unsupportedExpression,
                    detail: "%patient.age > 60")
            ])
        ) {
            try Self.read(
                #"""
                {"resourceType": "Questionnaire", "name": "P", "item": [{"linkId": "a", "type": "boolean", "text": "A",
                 "extension": [{"url": "http://hl7.org/fhir/uv/sdc/StructureDefinition/sdc-questionnaire-enableWhenExpression",
                   "valueExpression": {"language": "text/fhirpath", "expression": "%patient.age > 60"}}]}]}
                """#)
        }
    }

    @Test("an ordinal value compared stands for the options with such values, in the app's visibility too")
    func ordinals() throws {
        let definition = try Self.read(
            #"""
            {"resourceType": "Questionnaire", "name": "O", "item": [
              {"linkId": "q", "type": "choice", "text": "How often?", "answerOption": [
                {"valueCoding": {"code": "n", "display": "Never", "extension": [{"url": "http://hl7.org/fhir/StructureDefinition/ordinalValue", "valueDecimal": 0}]}},
                {"valueCoding": {"code": "s", "display": "Sometimes", "extension": [{"url": "http://hl7.org/fhir/StructureDefinition/ordinalValue", "valueDecimal": 1}]}},
                {"valueCoding": {"code": "o", "display": "Often", "extension": [{"url": "http://hl7.org/fhir/StructureDefinition/ordinalValue", "valueDecimal": 2}]}}]},
              {"linkId": "why", "type": "string", "text": "Why?", "extension": [{"url": "http://hl7.org/fhir/uv/sdc/StructureDefinition/sdc-questionnaire-enableWhenExpression",
                "valueExpression": {"language": "text/fhirpath", "expression": "%resource.item.where(linkId='q').answer.value.ordinal() >= 1"}}]}]}
            """#
        ).definition
        #expect(
            definition.item("why")?.visibleWhen
                == Condition(.any, [Clause(item: "q", .equals, .text("s")), Clause(item: "q", .equals, .text("o"))]))
        #expect(!InstrumentLogic(definition).visibility(["q": .text("n")]).items.contains("why"))
        #expect(InstrumentLogic(definition).visibility(["q": .text("o")]).items.contains("why"))
    }

    @Test(
        "regular expressions are kept and enforced, matched without backtracking; what the engine does not read is refused"
    )
    func patterns() throws {
        for (pattern, accepted, refused) in [
            ("[0-9]{5}", ["12345"], ["1234", "123456", "1234x"]),
            ("a|b", ["a", "b"], ["ab", ""]),
            ("^(?:\\d{2}\\.)*\\d$", ["7", "12.3", "12.34.5"], ["1.2", "12."]),
            ("[A-Za-z][^0-9\\s]*", ["Ab-c", "x"], ["A1", "a b", "1"]),
            ("colou?r s{1,2}", ["color s", "colour ss"], ["colouur s", "color sss"]),
            (".*@.*\\..{2,}", ["a@b.de"], ["a@b.d", "a@b"]),
            ("(x+x+)+y", ["xxy", "xxxxy"], [String(repeating: "x", count: 5000)]),
        ] {
            #expect(TextPattern.problem(pattern) == nil, "\(pattern)")
            for text in accepted { #expect(TextPattern.matches(pattern, text), "\(pattern) ~ \(text)") }
            for text in refused { #expect(!TextPattern.matches(pattern, text), "\(pattern) !~ \(text.prefix(20))") }
        }
        for (pattern, code) in [
            ("(a)\\1", FieldError.Code.tooComplex), ("(?=a)a", .tooComplex), ("\\bword", .tooComplex),
            ("a{1000}", .tooComplex), ("a++", .tooComplex), ("[", .invalidFormat), ("a)", .invalidFormat),
            ("*a", .invalidFormat), ("a**", .invalidFormat), ("[z-a]", .invalidFormat),
            (String(repeating: "a", count: 201), .tooLong),
        ] {
            #expect(TextPattern.problem(pattern) == code, "\(pattern)")
        }
        let definition = try Self.read(
            #"""
            {"resourceType": "Questionnaire", "name": "R", "item": [
              {"linkId": "zip", "type": "string", "text": "Postcode", "maxLength": 5, "extension": [{"url": "http://hl7.org/fhir/StructureDefinition/regex", "valueString": "[0-9]{5}"}]},
              {"linkId": "when", "type": "dateTime", "text": "When", "extension": [{"url": "http://hl7.org/fhir/StructureDefinition/minValue", "valueDateTime": "2026-01-01T00:00:00Z"}]}]}
            """#
        ).definition
        #expect(definition.problems(in: ["zip": .text("12345")]) == [])
        #expect(definition.problems(in: ["zip": .text("1234x")]).map(\.code) == [.invalidFormat])
        #expect(definition.item("zip")?.maxLength == 5)
        #expect(definition.item("when")?.earliest == "2026-01-01T00:00:00Z")
        #expect(throws: ValidationFailure([FieldError(field: "item[0]", code: .tooComplex)])) {
            try Self.read(
                #"""
                {"resourceType": "Questionnaire", "name": "R", "item": [{"linkId": "z", "type": "string", "text": "Z",
                  "extension": [{"url": "http://hl7.org/fhir/StructureDefinition/regex", "valueString": "(a)\\1"}]}]}
                """#)
        }
    }
}

@Suite("Answers in one's own words to a choice (open-choice)")
struct OtherAnswerTests {
    static let definition = InstrumentDefinition(
        key: "other", version: 1, title: "Other",
        sections: [
            Section(
                id: "s",
                items: [
                    Item(
                        id: "where", type: .single, text: "Where?",
                        options: [
                            AnswerOption(code: "home", label: "Home"), AnswerOption(code: "work", label: "Work"),
                        ],
                        allowsOther: true),
                    Item(
                        id: "who", type: .multiple, text: "Who?",
                        options: [
                            AnswerOption(code: "none", label: "Nobody", exclusive: true),
                            AnswerOption(code: "friends", label: "Friends"),
                        ],
                        allowsOther: true),
                    Item(
                        id: "closed", type: .single, text: "Closed",
                        options: [AnswerOption(code: "a", label: "A")]),
                ])
        ])

    @Test("a text in place of the code, or one beside the codes, is kept; without open-choice it is refused")
    func validation() {
        let definition = Self.definition
        #expect(definition.problems() == [])
        #expect(
            definition.problems(in: ["where": .text("At my sister's"), "who": .list(["friends", "My dog"])]) == [])
        #expect(definition.problems(in: ["closed": .text("B")]).map(\.code) == [.notAnOption])
        #expect(definition.problems(in: ["who": .list(["x", "y"])]).map(\.code) == [.notAnOption])
        #expect(definition.problems(in: ["who": .list(["none", "My dog"])]).map(\.code) == [.exclusive])
        #expect(definition.problems(in: ["where": .text(String(repeating: "x", count: 201))]).map(\.code) == [.tooLong])
        #expect(definition.problems(in: ["where": .text("two\nlines")]).map(\.code) == [.controlCharacter])
    }

    @Test("FHIR open-choice reads as a choice taking one's own words, and writes them back as valueString")
    func fhir() throws {
        let imported = try FHIRQuestionnaireImport.definition(
            from: Data(
                #"""
                {"resourceType": "Questionnaire", "name": "O", "item": [{"linkId": "where", "type": "open-choice",
                 "text": "Where?", "answerOption": [{"valueCoding": {"code": "home", "display": "Home"}}]}]}
                """#.utf8))
        #expect(imported.item("where")?.allowsOther == true)
        let exported = Self.definition.fhirQuestionnaire(canonicalURL: "https://x.example/q")
        #expect(exported.item?.first?.item?.map(\.type) == ["open-choice", "open-choice", "choice"])
        let response = Self.definition.fhirResponse(
            id: "r", answers: ["where": .text("At my sister's"), "who": .list(["friends", "My dog"])],
            questionnaireURL: "https://x.example/q", authored: Date(timeIntervalSince1970: 0), subject: nil)
        let answers = response.item?.first?.item?.map { $0.answer ?? [] } ?? []
        #expect(answers.first?.first?.valueString == "At my sister's")
        #expect(answers.last?.map { $0.valueCoding?.code ?? $0.valueString } == ["friends", "My dog"])
    }

    @Test("the wide export keeps a multiple choice's own words in a column of their own")
    func codebook() {
        let form = Codebook([Self.definition]).forms[0]
        #expect(form.variables.map(\.name) == ["where", "who___none", "who___friends", "who_other", "closed"])
        #expect(
            form.values(answers: ["where": .text("At my sister's"), "who": .list(["friends", "My dog"])], scores: [])
                == ["At my sister's", "0", "1", "My dog", nil])
    }
}
