import Foundation
import InterludeCore
import Testing

@Suite("Text hygiene: control characters and email addresses")
struct TextHygieneTests {
    @Test(
        "a one-line field refuses every control character, running text keeps newline and tab only",
        arguments: [
            ("plain words", false, false), ("two\nlines", true, false), ("tab\there", true, false),
            ("bell\u{07}", true, true), ("nul\u{00}", true, true), ("escape\u{1B}[31m", true, true),
            ("delete\u{7F}", true, true), ("c1\u{85}", true, true), ("crlf\r\n", true, false),
            ("umlaut ä and emoji 🌿", false, false),
            // Bidirectional overrides and isolates turn a one-line text around as it is shown; Arabic and Hebrew
            // text itself, and the marks a keyboard writes, stay.
            ("cod\u{202E}exe.doc", true, false), ("name\u{2066}x\u{2069}", true, false),
            ("\u{202A}embedded\u{202C}", true, false),
            ("مرحبا שלום", false, false), ("mark\u{200F}", false, false),
        ])
    func controlCharacters(text: String, singleRefuses: Bool, multipleRefuses: Bool) {
        #expect(text.hasControlCharacters(allowing: .single) == singleRefuses)
        #expect(text.hasControlCharacters(allowing: .multiple) == multipleRefuses)
    }

    @Test("the validator names the field and keeps nothing of a text with a control character")
    func validatorRefuses() {
        // setup
        var validator = FieldValidator()
        // act
        let title = validator.text("Evil\u{1B}title", field: "title", maxLength: 100)
        let comment = validator.text("First line\nsecond", field: "comment", maxLength: 100, lines: .multiple)
        let name = validator.text("Ada\nLovelace", field: "name", maxLength: 100)
        // verify
        #expect(title == nil)
        #expect(comment == "First line\nsecond")
        #expect(name == nil)
        #expect(
            validator.errors == [
                FieldError(field: "title", code: .controlCharacter), FieldError(field: "name", code: .controlCharacter),
            ])
    }

    @Test(
        "a JSON document is searched in every string and key, and the place of the first hit is named",
        arguments: [
            (#"{"title": "fine", "items": [{"text": "ok"}, {"text": "bad\u0007"}]}"#, "items.1.text"),
            (#"{"a": {"b\u0000": 1}}"#, "a.key"),
            (#""top\u001b""#, "body"),
            ("{\"c1\": \"x\u{85}\"}", "c1"),
            (#"{"note": "two\nlines\tand a tab"}"#, nil),
            (#"{"escaped": "a backslash \\u0007 is text"}"#, nil),
            (#"{"accent": "caf\u00e9"}"#, nil),
            ("not json \u{07}", nil),
        ] as [(String, String?)])
    func jsonScan(json: String, place: String?) {
        #expect(JSONTextScan.controlCharacterPath(in: Data(json.utf8)) == place)
    }

    @Test(
        "Punycode encodes labels as RFC 3492 does",
        arguments: [
            ("bücher", "bcher-kva"), ("münchen", "mnchen-3ya"), ("españa", "espaa-rta"), ("ü", "tda"),
            ("日本", "wgv71a"), ("παράδειγμα", "hxajbheg2az3al"), ("пример", "e1afmkfd"),
        ])
    func punycode(label: String, encoded: String) {
        #expect(Punycode.encode(label) == encoded)
    }

    @Test(
        "addresses are normalised to one ASCII spelling",
        arguments: [
            ("Anna@Exämple.ORG", "anna@xn--exmple-cua.org"), ("anna@xn--exmple-cua.org", "anna@xn--exmple-cua.org"),
            ("ａｎｎａ@example.org", "anna@example.org"), ("anna@ｅｘａｍｐｌｅ.org", "anna@example.org"),
            ("  ada@example.org ", "ada@example.org"), ("kim@bücher.de", "kim@xn--bcher-kva.de"),
            ("ivan@пример.рф", "ivan@xn--e1afmkfd.xn--p1ai"),
        ])
    func normalised(raw: String, value: String) {
        #expect(EmailAddress(raw)?.value == value)
    }

    @Test(
        "look-alike and malformed addresses are refused",
        arguments: [
            "аnna@example.org", "anna@exаmple.org", "anna@ex\u{07}ample.org", "an\u{00}na@example.org",
            "anna@-example.org", "anna@example", "anna@example..org", "anna@@example.org", "anna@exam ple.org",
            "anna@" + String(repeating: "ä", count: 60) + ".org",
        ])
    func refused(raw: String) {
        #expect(EmailAddress(raw) == nil)
    }
}
