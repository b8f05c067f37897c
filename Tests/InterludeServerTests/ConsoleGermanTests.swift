import Fluent
import Foundation
import InterludeCore
import Testing
import VaporTesting

@testable import InterludeServer

@Suite("The console in German: no English text on any page")
struct ConsoleGermanTests {
    /// The English texts of the catalogue that are not also the German ones, each cut at its placeholders to its
    /// longest fixed part; parts of one or two short words are left out, as they could stand inside anything.
    static func englishOnly(_ localizer: Localizer) -> [(key: String, text: String)] {
        let english = localizer.table(prefix: "", .en)
        let german = localizer.table(prefix: "", .de)
        let germanTexts = Set(german.values)
        return english.compactMap { key, text -> (key: String, text: String)? in
            // The demo's own content, and what was sent to an English-speaking patient, stay as they were written.
            guard german[key] != text, !key.hasPrefix("demo."), !key.hasPrefix("notification.") else { return nil }
            let fixed =
                text.split(separator: "{").map { $0.split(separator: "}").last.map(String.init) ?? "" }
                .map { $0.trimmingCharacters(in: .whitespacesAndNewlines.union(.punctuationCharacters)) }
                .max { $0.count < $1.count } ?? ""
            guard fixed.count >= 12, fixed.contains(" "), !germanTexts.contains(where: { $0.contains(fixed) }) else {
                return nil
            }
            return (key, fixed)
        }
    }

    /// What a reader sees of a page: its text without markup, scripts and styles.
    static func visibleText(_ html: String) -> String {
        var text = html
        for pattern in [#"<script\b[^>]*>[\s\S]*?</script>"#, #"<style\b[^>]*>[\s\S]*?</style>"#, #"<[^>]+>"#] {
            text = text.replacingOccurrences(of: pattern, with: " ", options: .regularExpression)
        }
        for (entity, character) in [
            ("&amp;", "&"), ("&lt;", "<"), ("&gt;", ">"), ("&quot;", "\""), ("&#39;", "'"), ("&#x27;", "'"),
        ] {
            text = text.replacingOccurrences(of: entity, with: character)
        }
        return text.replacingOccurrences(of: #"\s+"#, with: " ", options: .regularExpression)
    }

    @Test("every console page of the demo's therapist and researcher, set to German, shows no English catalogue text")
    func everyPage() async throws {
        try await withTestApp { app in
            // setup: the demo, its staff reading German
            try FileManager.default.createDirectory(
                atPath: app.settings.dataDirectory, withIntermediateDirectories: true)
            let accounts = try #require(
                try await DemoInstallation(database: app.database, services: app.app.interlude, logger: app.app.logger)
                    .ensure())
            for user in try await UserRecord.query(on: app.database).filter(\.$role != .patient).all() {
                user.locale = Language.de.rawValue
                try await user.save(on: app.database)
            }
            let therapistAccount = try #require(accounts.first { $0.role == .therapist })
            let researcherAccount = try #require(accounts.first { $0.role == .researcher })
            let therapist = ConsoleBrowser(app)
            _ = try await therapist.signIn(therapistAccount.email, password: therapistAccount.password)
            let researcher = ConsoleBrowser(app)
            _ = try await researcher.signIn(researcherAccount.email, password: researcherAccount.password)
            let ben = try #require(
                try await UserRecord.query(on: app.database).filter(\.$email == "ben@demo.example.org").first()
            ).requireID()
            let practice = try #require(
                try await StudyRecord.query(on: app.database).filter(\.$joinMode == .pairingCode).first()
            ).requireID()
            let research = try #require(
                try await StudyRecord.query(on: app.database).filter(\.$joinMode != .pairingCode).first()
            ).requireID()
            let response = try #require(
                try await ResponseRecord.query(on: app.database).filter(\.$patient.$id == ben).first()
            ).requireID()
            let chart = "/console/patients/\(ben)"
            let pages: [(ConsoleBrowser, String)] =
                [
                    "/console/patients", chart, chart + "/intersession", chart + "/report", chart + "/record",
                    chart + "/thoughts",
                    chart + "/responses/\(response)", "/console/schedule/\(ben)", "/console/alerts",
                    "/console/studies/\(practice)/plans",
                    "/console/studies/\(practice)/rules", "/console/studies/\(practice)/records", "/console/studies",
                    "/console/instruments",
                    "/console/instruments/phq-9/1", "/console/pairing-codes", "/console/profile",
                ].map { (therapist, $0) }
                + [
                    "/console/studies", "/console/studies/new", "/console/studies/\(research)",
                    "/console/studies/\(research)/edit",
                    "/console/studies/\(research)/exports", "/console/studies/\(research)/consent",
                    "/console/studies/\(research)/team", "/console/studies/\(research)/monitor?days=90",
                    "/console/studies/\(research)/plans", "/console/studies/\(research)/rules",
                    "/console/instruments/editor?key=phq-9&version=1",
                ].map { (researcher, $0) }
            let english = Self.englishOnly(app.app.interlude.localizer)
            #expect(english.count > 300, "the check has English texts to look for")

            // act
            var found: [String] = []
            for (browser, path) in pages {
                let page = try await browser.get(path)
                #expect(page.status == .ok, "\(path): \(page.status)")
                let text = Self.visibleText(page.html)
                #expect(text.contains("Abmelden"), "\(path) is in German")
                for (key, fragment) in english where text.contains(fragment) {
                    found.append("\(path): \(key) “\(fragment)”")
                }
            }

            // verify
            #expect(found.isEmpty, "\(found.sorted().joined(separator: "\n"))")
        }
    }
}
