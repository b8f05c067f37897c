import Fluent
import Foundation
import InterludeCore
import Testing

@testable import InterludeServer

/// The questionnaire editor's page and its save: what it starts from, and the server's checks on what it sends.
@Suite("The questionnaire editor on the console")
struct ConsoleInstrumentEditorTests {
    /// The definition the editor page carries in its JSON field.
    static func definition(in html: String) throws -> InstrumentDefinition {
        let start = try #require(html.range(of: "name=\"definition\" rows=\"24\" spellcheck=\"false\">"))
        let end = try #require(html.range(of: "</textarea>", range: start.upperBound..<html.endIndex))
        let escaped = String(html[start.upperBound..<end.lowerBound])
        let text = escaped.replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&#39;", with: "'")
            .replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">")
            .replacingOccurrences(of: "&amp;", with: "&")
        return try JSONDecoder().decode(InstrumentDefinition.self, from: Data(text.utf8))
    }

    static func json(_ definition: InstrumentDefinition) throws -> String {
        String(decoding: try JSONEncoder().encode(definition), as: UTF8.self)
    }

    @Test(
        "the editor starts from a stored version; saved under a key of the study's own, it passes the checks as a new draft"
    )
    func roundTrip() async throws {
        try await withTestApp { app in
            // setup
            let (_, studyID) = try await QuestionnaireAPITests().researcherWithStudy(app)
            let browser = ConsoleBrowser(app)
            _ = try await browser.signIn("lab@uni.example")

            // act
            let blank = try await browser.get("/console/instruments/editor")
            let page = try await browser.get("/console/instruments/editor?key=phq-9&version=1")
            var copy = try Self.definition(in: page.html)
            copy.key = "phq-9-ours"
            let saved = try await browser.post(
                "/console/instruments/editor", [("definition", try Self.json(copy)), ("study", studyID)])
            let library = try await browser.post(
                "/console/instruments/editor",
                [("definition", try Self.json(try Self.definition(in: page.html))), ("study", studyID)])
            let unknown = try await browser.get("/console/instruments/editor?key=nothing&version=1")

            // verify
            #expect(blank.status == .ok && blank.html.contains("/js/console/instrument-editor.js\"></script>"))
            #expect(blank.html.contains("<iframe id=\"preview\" src=\"/app/preview\""))
            #expect(try Self.definition(in: blank.html).sections.count == 1)
            let original = try #require(
                try await InstrumentCatalog(database: app.database, services: app.app.interlude).definition("phq-9", 1))
            #expect(try Self.definition(in: page.html) == original)
            #expect(saved.status == .seeOther && saved.location == "/console/instruments/phq-9-ours/1?imported=1")
            let stored = try #require(
                try await InstrumentCatalog(database: app.database, services: app.app.interlude).version(
                    "phq-9-ours", 1))
            #expect(stored.status == .draft && stored.$ownerStudy.id?.uuidString == studyID.uppercased())
            var expected = original
            expected.key = "phq-9-ours"
            #expect(try stored.decodedDefinition() == expected)
            #expect(
                library.status == .forbidden && library.html.contains("id=\"editor-errors\""),
                "the library's questionnaires stay as shipped")
            #expect(unknown.status == .notFound)
        }
    }

    @Test("a definition the checks refuse is named and kept in the editor, and nothing is stored")
    func refused() async throws {
        try await withTestApp { app in
            // setup
            let (_, studyID) = try await QuestionnaireAPITests().researcherWithStudy(app)
            let browser = ConsoleBrowser(app)
            _ = try await browser.signIn("lab@uni.example")
            _ = try await browser.get("/console/instruments/editor")
            let before = try await app.count("instrument_versions")
            var broken = try #require(
                try await InstrumentCatalog(database: app.database, services: app.app.interlude).definition(
                    "mood-vas", 1))
            broken.key = "mood-ours"
            broken.sections[0].items[0].min = 50
            broken.sections[0].items[0].max = 10

            // act
            let unreadable = try await browser.post(
                "/console/instruments/editor", [("definition", "{\"key\": "), ("study", studyID)])
            let invalid = try await browser.post(
                "/console/instruments/editor", [("definition", try Self.json(broken)), ("study", studyID)])
            let noStudy = try await browser.post(
                "/console/instruments/editor", [("definition", try Self.json(broken)), ("study", "")])

            // verify
            #expect(unreadable.status == .unprocessableEntity && unreadable.html.contains("id=\"editor-errors\""))
            #expect(unreadable.html.contains("{&quot;key&quot;: </textarea>"), "what was sent stays in the editor")
            #expect(invalid.status == .unprocessableEntity)
            let listed = invalid.html.matches(of: /<li>([^<]+)<\/li>/).map { String($0.output.1) }
            #expect(listed.contains { $0.hasPrefix("sections.0.items.0.max: ") }, "\(listed)")
            #expect(try Self.definition(in: invalid.html).sections[0].items[0].min == 50)
            #expect(noStudy.status == .unprocessableEntity)
            #expect(try await app.count("instrument_versions") == before)
        }
    }
}
