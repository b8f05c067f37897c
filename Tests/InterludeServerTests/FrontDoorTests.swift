import Foundation
import Testing
import VaporTesting

@testable import InterludeServer

@Suite("The front door at /")
struct FrontDoorTests {
    func frontDoor(_ app: TestContext, _ query: String = "", language: String) async throws -> String {
        var html = ""
        try await app.app.testing().test(.GET, "/\(query)", headers: ["Accept-Language": language]) { response in
            #expect(response.status == .ok)
            html = response.body.string
        }
        return html
    }

    @Test("says what it is and leads to the app and the console, in the reader's language or the one chosen")
    func bothWaysIn() async throws {
        try await withTestApp { app in
            let german = try await frontDoor(app, language: "de-AT,de;q=0.9")
            #expect(
                german.contains("<html lang=\"de\">") && german.contains("App öffnen")
                    && german.contains("Konsole für Fachpersonen"))
            #expect(german.contains("href=\"/app\"") && german.contains("href=\"/console\""))
            #expect(german.contains("href=\"/?lang=en\""))
            let english = try await frontDoor(app, "?lang=en", language: "de")
            #expect(
                english.contains("<html lang=\"en\">") && english.contains("Open the app")
                    && english.contains("Staff console"))
            #expect(english.contains("<h1>Interlude</h1>"))
        }
    }

    @Test("the admin names the installation; a name too long is refused with nothing changed")
    func named() async throws {
        try await withTestApp { app in
            _ = try await app.staff("admin", "admin@clinic.example")
            let browser = ConsoleBrowser(app)
            _ = try await browser.signIn("admin@clinic.example")
            _ = try await browser.get("/console/settings")
            let refused = try await browser.post(
                "/console/settings/name", [("installationName", String(repeating: "x", count: 81))])
            #expect(refused.status == .unprocessableEntity)
            #expect(refused.html.contains("id=\"installationName-error\""))
            #expect(try await frontDoor(app, language: "en").contains("<h1>Interlude</h1>"))
            let saved = try await browser.post(
                "/console/settings/name", [("installationName", "Praxis am Ring <Wien>")])
            #expect(saved.status == .seeOther)
            let named = try await frontDoor(app, language: "en")
            #expect(named.contains("<h1>Praxis am Ring &lt;Wien&gt;</h1>"))
            #expect(try await browser.get("/console/settings").html.contains("value=\"Praxis am Ring &lt;Wien&gt;\""))
        }
    }
}
