import Foundation
import Testing
import Vapor

@testable import InterludeServer

/// Importing a file on the console's Questionnaires page: a dictionary's forms, what is not asked, refusals by
/// their place in the file.
@Suite("Importing questionnaires on the console")
struct ConsoleInstrumentImportTests {
    @Test(
        "a dictionary of two forms becomes two drafts, listed with what was not asked and why; a key of one's own imports it again"
    )
    func twoForms() async throws {
        try await withTestApp { app in
            // setup
            let (_, studyID) = try await QuestionnaireAPITests().researcherWithStudy(app)
            let browser = ConsoleBrowser(app)
            _ = try await browser.signIn("lab@uni.example")
            _ = try await browser.get("/console/instruments")
            let file = (field: "file", name: "dictionary.csv", content: QuestionnaireAPITests.twoForms)

            // act
            let imported = try await browser.upload("/console/instruments", [("study", studyID)], file: file)
            let again = try await browser.upload("/console/instruments", [("study", studyID)], file: file)
            let own = try await browser.upload(
                "/console/instruments", [("study", studyID), ("key", "smoking"), ("forms", "screening")], file: file)

            // verify
            #expect(imported.status == .ok)
            #expect(imported.html.contains(#"id="import-report""#))
            #expect(imported.html.contains(#"href="/console/instruments/screening/1""#))
            #expect(imported.html.contains(#"href="/console/instruments/epds/1""#))
            #expect(imported.html.contains("row 2 (field &quot;record_id&quot;): record_id is the record ID"))
            #expect(imported.html.contains("epds_total is calculated as a sum or mean: imported as a score"))
            #expect(
                again.status == .ok && again.html.contains(#"href="/console/instruments/epds/1""#),
                "a new draft replaces the old")
            #expect(own.status == .ok && own.html.contains(#"href="/console/instruments/smoking/1""#))
            #expect(!own.html.contains(#"href="/console/instruments/smoking-epds/1""#), "only the form chosen")
        }
    }

    @Test(
        "a file Interlude cannot run is refused with every problem at its row and field, in words, and nothing imported"
    )
    func refused() async throws {
        try await withTestApp { app in
            // setup
            let (_, studyID) = try await QuestionnaireAPITests().researcherWithStudy(app)
            let browser = ConsoleBrowser(app)
            _ = try await browser.signIn("lab@uni.example")
            _ = try await browser.get("/console/instruments")
            let broken = QuestionnaireAPITests.twoForms.replacingOccurrences(
                of: "[smoker] = '1'", with: "[visit_1_arm_1][smoker] = '1'"
            )
            .replacingOccurrences(of: "e2,epds,,radio", with: "e2,epds,,file")
            let before = try await app.count("instrument_versions")

            // act
            let page = try await browser.upload(
                "/console/instruments", [("study", studyID)], file: (field: "file", name: "broken.csv", content: broken)
            )

            // verify
            #expect(page.status == .unprocessableEntity)
            #expect(page.html.contains("row 4 (field &quot;per_day&quot;): Longitudinal logic is not supported"))
            #expect(page.html.contains("row 6 (field &quot;e2&quot;): Field type “file” is not one Interlude can ask."))
            #expect(try await app.count("instrument_versions") == before)
        }
    }
}

/// What a command prints, line by line.
final class RecordingConsole: Console, @unchecked Sendable {
    private(set) var lines: [String] = []
    var userInfo: [AnySendableHashable: any Sendable] = [:]
    var size: (width: Int, height: Int) { (120, 40) }

    func input(isSecure: Bool) -> String { "" }
    func output(_ text: ConsoleText, newLine: Bool) { lines.append(text.description) }
    func clear(_ type: ConsoleClear) {}
    func report(error: String, newLine: Bool) { lines.append(error) }
}

@Suite("Importing questionnaires with the command")
struct InstrumentsCommandTests {
    /// Runs `interlude instruments import FILE ARGUMENTS…` in the test's application.
    static func run(_ app: TestContext, file content: String, _ arguments: [String]) async throws -> (
        lines: [String], failure: String?
    ) {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("import-\(UUID().uuidString).csv")
        try content.write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let console = RecordingConsole()
        var context = CommandContext(
            console: console, input: CommandInput(arguments: ["interlude", "import", file.path] + arguments))
        context.application = app.app
        do {
            try await InstrumentsCommand().run(using: &context)
            return (console.lines, nil)
        } catch {
            return (console.lines, "\(error)")
        }
    }

    @Test(
        "the command imports the forms chosen under a key of one's own, and prints a refused file's problems one per line"
    )
    func importsAndRefuses() async throws {
        try await withTestApp { app in
            // setup
            _ = try await app.staff("admin", "operator@clinic.example")
            let broken = QuestionnaireAPITests.twoForms.replacingOccurrences(
                of: "[smoker] = '1'", with: "[smoker] >= '1' and sqrt([x]) > 1"
            )
            .replacingOccurrences(of: "e2,epds,,radio", with: "e2,epds,,sql")

            // act
            let imported = try await Self.run(
                app, file: QuestionnaireAPITests.twoForms, ["--forms", "epds", "--key", "cli-epds"])
            let refused = try await Self.run(app, file: broken, [])
            let badKey = try await Self.run(app, file: QuestionnaireAPITests.twoForms, ["--key", "Bad Key"])

            // verify
            #expect(imported.failure == nil, "\(imported.lines)")
            #expect(imported.lines.contains("Imported cli-epds version 1 as draft (redcap)."))
            #expect(imported.lines.contains { $0.hasPrefix(#"row 7 (field "epds_total"): epds_total is calculated"#) })
            #expect(refused.failure == "The file was refused: 2 problems, listed above.", "\(refused.lines)")
            #expect(
                refused.lines.contains {
                    $0.hasPrefix(
                        #"row 4 (field "per_day"): Interlude cannot read this logic: [smoker] >= '1' and sqrt([x]) > 1."#
                    )
                })
            #expect(refused.lines.contains(#"row 6 (field "e2"): Field type “sql” is not one Interlude can ask."#))
            #expect(badKey.failure?.hasPrefix("key:") == true)
        }
    }
}
