import Foundation
import Testing

@testable import InterludeCore

@Suite("Instrument definitions")
struct InstrumentDefinitionTests {
    static func definition(_ json: String) throws -> InstrumentDefinition {
        try JSONDecoder().decode(InstrumentDefinition.self, from: Data(json.utf8))
    }

    static let valid = """
        {"key": "mini", "version": 1, "title": {"en": "Mini", "de": "Mini"},
         "sections": [{"id": "s1", "options": [{"code": "0", "label": "no"}, {"code": "1", "label": "yes"}],
           "items": [{"id": "a", "type": "single", "text": "A", "required": true},
                     {"id": "b", "type": "single", "text": "B", "visibleWhen": {"clauses": [{"item": "a", "operator": "equals", "value": "1"}]}}]}],
         "scores": [{"id": "total", "title": "Total", "method": "sum", "items": ["a", "b"],
           "bands": [{"min": 0, "max": 0, "label": "none"}, {"min": 1, "max": 2, "label": "some"}]}]}
        """

    func codes(_ json: String) throws -> [String: String] {
        let problems = try Self.definition(json).problems()
        return Dictionary(problems.map { ($0.field, $0.code.rawValue) }, uniquingKeysWith: { first, _ in first })
    }

    @Test("a well-formed definition has no problems and round-trips through JSON")
    func valid() throws {
        let definition = try Self.definition(Self.valid)
        #expect(definition.problems() == [])
        let encoded = try JSONEncoder().encode(definition)
        #expect(try JSONDecoder().decode(InstrumentDefinition.self, from: encoded) == definition)
        #expect(definition.title.text(.de) == "Mini")
        #expect(definition.options(of: definition.items[0]).count == 2)
    }

    @Test("the outro shown after sending round-trips in every language; a control character in it is refused")
    func outro() throws {
        var withOutro = Self.valid
        withOutro.removeLast()
        withOutro += #", "outro": {"en": "Thank you.\nSee you tomorrow.", "de": "Danke.\nBis morgen."}}"#
        let definition = try Self.definition(withOutro)
        #expect(definition.outro?.text(.de) == "Danke.\nBis morgen.")
        #expect(definition.problems() == [])
        #expect(
            try JSONDecoder().decode(InstrumentDefinition.self, from: JSONEncoder().encode(definition)) == definition)
        #expect(
            try codes(withOutro.replacingOccurrences(of: "Thank you.", with: "Thank\\u0007you."))["outro.en"]
                == "controlCharacter")
    }

    @Test(
        "the context an instrument asks for round-trips; none is not written; a kind twice or an unknown kind is refused"
    )
    func context() throws {
        var asking = Self.valid
        asking.removeLast()
        asking += #", "context": ["location", "noise"]}"#
        let definition = try Self.definition(asking)
        #expect(definition.context == [.location, .noise])
        #expect(definition.problems() == [])
        #expect(
            try JSONDecoder().decode(InstrumentDefinition.self, from: JSONEncoder().encode(definition)) == definition)
        let plain = try Self.definition(Self.valid)
        #expect(plain.context == [])
        #expect(!String(decoding: try JSONEncoder().encode(plain), as: UTF8.self).contains("context"))
        #expect(!String(decoding: try JSONEncoder().encode(plain), as: UTF8.self).contains("outro"))
        #expect(
            try codes(asking.replacingOccurrences(of: #"["location", "noise"]"#, with: #"["noise", "noise"]"#))[
                "context"] == "duplicate")
        #expect(throws: DecodingError.self) {
            try Self.definition(asking.replacingOccurrences(of: #""noise"]"#, with: #""heart rate"]"#))
        }
    }

    @Test("duplicate ids and option codes are named where they are")
    func duplicates() throws {
        let found = try codes(
            """
            {"key": "dup", "title": "Dup", "sections": [
              {"id": "s", "items": [{"id": "a", "type": "boolean", "text": "A"}, {"id": "a", "type": "single", "text": "B",
                "options": [{"code": "x", "label": "X"}, {"code": "x", "label": "Y"}]}]},
              {"id": "s", "items": [{"id": "c", "type": "text", "text": "C"}]}]}
            """)
        #expect(found["sections.0.items.1.id"] == "duplicate")
        #expect(found["sections.0.items.1.options.1.code"] == "duplicate")
        #expect(found["sections.1.id"] == "duplicate")
    }

    @Test("references to unknown items, self-references and cycles are refused")
    func references() throws {
        let found = try codes(
            """
            {"key": "refs", "title": "Refs", "sections": [
              {"id": "s", "visibleWhen": {"clauses": [{"item": "b", "operator": "answered"}]}, "items": [
                {"id": "a", "type": "boolean", "text": "A", "visibleWhen": {"clauses": [{"item": "ghost", "operator": "equals", "value": true}]}},
                {"id": "b", "type": "boolean", "text": "B"},
                {"id": "c", "type": "boolean", "text": "C", "visibleWhen": {"clauses": [{"item": "c", "operator": "answered"}]}}]},
              {"id": "t", "items": [
                {"id": "d", "type": "boolean", "text": "D", "visibleWhen": {"clauses": [{"item": "e", "operator": "equals", "value": true}]}},
                {"id": "e", "type": "boolean", "text": "E", "visibleWhen": {"clauses": [{"item": "d", "operator": "equals", "value": true}]}}]}],
             "scores": [{"id": "s1", "title": "S", "method": "sum", "items": ["a", "nothing"], "reverse": ["b"]}]}
            """)
        #expect(found["sections.0.items.0.visibleWhen.clauses.0.item"] == "unknown")
        #expect(found["sections.0.items.2.visibleWhen.clauses.0.item"] == "cycle")
        #expect(found["sections.0.visibleWhen"] == "cycle")
        #expect(found["sections.1.items.0.visibleWhen"] == "cycle")
        #expect(found["scores.0.items.1"] == "unknown")
        #expect(found["scores.0.reverse.0"] == "unknown")
    }

    @Test("bands must cover the score's range without gap or overlap")
    func bands() throws {
        func bandCodes(_ bands: String, method: String = "sum") throws -> [String: String] {
            try codes(
                """
                {"key": "b", "title": "B", "sections": [{"id": "s", "items": [
                  {"id": "x", "type": "scale", "text": "X", "min": 0, "max": 3},
                  {"id": "y", "type": "scale", "text": "Y", "min": 0, "max": 3}]}],
                 "scores": [{"id": "t", "title": "T", "method": "\(method)", "items": ["x", "y"], "bands": \(bands)}]}
                """)
        }
        #expect(try bandCodes(#"[{"min": 0, "max": 2, "label": "a"}, {"min": 3, "max": 6, "label": "b"}]"#).isEmpty)
        #expect(
            try bandCodes(#"[{"min": 0, "max": 3, "label": "a"}, {"min": 3, "max": 6, "label": "b"}]"#)[
                "scores.0.bands.1"] == "overlap")
        #expect(
            try bandCodes(#"[{"min": 0, "max": 2, "label": "a"}, {"min": 4, "max": 6, "label": "b"}]"#)[
                "scores.0.bands.1"] == "gap")
        #expect(
            try bandCodes(#"[{"min": 0, "max": 2, "label": "a"}, {"min": 3, "max": 5, "label": "b"}]"#)[
                "scores.0.bands"] == "incomplete")
        #expect(
            try bandCodes(
                #"[{"min": 0, "max": 1.49, "label": "a"}, {"min": 1.5, "max": 3, "label": "b"}]"#, method: "mean"
            ).isEmpty)
        #expect(
            try bandCodes(
                #"[{"min": 0, "max": 1.4, "label": "a"}, {"min": 1.5, "max": 3, "label": "b"}]"#, method: "mean")[
                    "scores.0.bands.1"] == "gap")
    }

    @Test("item settings that cannot work are refused")
    func itemSettings() throws {
        let found = try codes(
            """
            {"key": "items", "title": "Items", "sections": [{"id": "s", "items": [
              {"id": "single", "type": "single", "text": "No options"},
              {"id": "slider", "type": "slider", "text": "Backwards", "min": 10, "max": 0},
              {"id": "scale", "type": "scale", "text": "Half", "min": 0, "max": 2.5},
              {"id": "excl", "type": "single", "text": "Exclusive", "options": [{"code": "a", "label": "A", "exclusive": true}]},
              {"id": "shown", "type": "display", "text": "Hello", "required": true},
              {"id": "words", "type": "text", "text": "Words", "maxLength": 0},
              {"id": "empty", "type": "boolean", "text": ""}]}]}
            """)
        #expect(found["sections.0.items.0.options"] == "required")
        #expect(found["sections.0.items.1.max"] == "invalidValue")
        #expect(found["sections.0.items.2.max"] == "invalidValue")
        #expect(found["sections.0.items.3.options"] == "notAllowed")
        #expect(found["sections.0.items.4.required"] == "notAllowed")
        #expect(found["sections.0.items.5.maxLength"] == "invalidValue")
        #expect(found["sections.0.items.6.text"] == "required")
    }

    @Test("unknown item types and languages fail to decode, naming the place")
    func unknownTypes() throws {
        #expect(throws: DecodingError.self) {
            try Self.definition(
                #"{"key": "k", "title": "T", "sections": [{"id": "s", "items": [{"id": "a", "type": "video", "text": "A"}]}]}"#
            )
        }
        #expect(throws: DecodingError.self) {
            try Self.definition(#"{"key": "k", "title": {"fr": "Titre"}, "sections": []}"#)
        }
        #expect(try codes(#"{"key": "Bad Key", "title": "T", "sections": []}"#)["key"] == "invalidFormat")
    }

    @Test("a text in several languages is written as one object keyed by language and read back the same")
    func localizedTextJSON() throws {
        func object(_ text: LocalizedText) throws -> [String: String]? {
            try JSONSerialization.jsonObject(with: JSONEncoder().encode(text)) as? [String: String]
        }
        let both = LocalizedText(en: "Total", de: "Summe \u{00FC}")
        #expect(try object(both) == ["en": "Total", "de": "Summe \u{00FC}"])
        #expect(try JSONDecoder().decode(LocalizedText.self, from: JSONEncoder().encode(both)) == both)
        #expect(try object(LocalizedText([.de: "Nur deutsch"])) == ["de": "Nur deutsch"])
        #expect(
            try JSONDecoder().decode(LocalizedText.self, from: Data(#""plain""#.utf8)) == LocalizedText(en: "plain"))
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(LocalizedText.self, from: Data(#"{"fr":"Total"}"#.utf8))
        }
    }

    @Test("scores: reverse coding, minimum answered with prorating, mean, factor")
    func scoring() throws {
        let definition = InstrumentDefinition(
            key: "s", version: 1, title: "S",
            sections: [
                Section(
                    id: "s", options: (0...4).map { AnswerOption(code: String($0), label: LocalizedText(en: "\($0)")) },
                    items: (1...4).map { Item(id: "i\($0)", type: .single, text: LocalizedText(en: "I\($0)")) })
            ],
            scores: [
                ScoreRule(
                    id: "sum", title: "Sum", method: .sum, items: ["i1", "i2", "i3", "i4"], reverse: ["i4"],
                    minAnswered: 3, prorate: true),
                ScoreRule(id: "mean", title: "Mean", method: .mean, items: ["i1", "i2", "i3", "i4"], minAnswered: 2),
                ScoreRule(id: "pct", title: "Percent", method: .sum, items: ["i1", "i2", "i3", "i4"], factor: 6.25),
            ])
        #expect(definition.problems() == [])
        let all = definition.scores(for: [
            "i1": AnswerValue.text("1"), "i2": AnswerValue.text("2"), "i3": AnswerValue.text("4"),
            "i4": AnswerValue.text("0"),
        ])
        #expect(all.map(\.value) == [11, 1.75, 44])
        let three = definition.scores(for: [
            "i1": AnswerValue.text("1"), "i2": AnswerValue.text("2"), "i3": AnswerValue.text("4"),
        ])
        #expect(three[0].value == 9)  // 7 × 4/3 = 9.33
        #expect(three[1].value == 2.33)
        #expect(three[2].value == nil)
        let two = definition.scores(for: ["i1": AnswerValue.text("1"), "i2": AnswerValue.text("2")])
        #expect(two[0].value == nil)
        #expect(two[1].value == 1.5)
    }
}
