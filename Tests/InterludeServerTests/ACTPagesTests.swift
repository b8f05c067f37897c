import Foundation
import InterludeCore
import Testing
import VaporTesting

@testable import InterludeServer

/// ACT information in the patient app: the hexaflex links its six processes, each page shows the shipped text in
/// the person's language until the admin publishes their own, which then shows.
@Suite("ACT information: the hexaflex and its six pages")
struct ACTPagesTests {
    private func page(_ app: TestContext, _ path: String, language: String = "en") async throws -> (HTTPStatus, String)
    {
        var result: (HTTPStatus, String) = (.internalServerError, "")
        try await app.app.testing().test(.GET, path, headers: ["Accept-Language": language]) { response in
            result = (response.status, response.body.string)
        }
        return result
    }

    @Test("the hexaflex is an SVG with a named link to each process around psychological flexibility")
    func hexaflex() async throws {
        try await withTestApp { app in
            // act
            let (status, html) = try await page(app, "/app/act")

            // verify
            #expect(status == .ok)
            let links = html.matches(of: /<a href="\/app\/act\/([a-z-]+)" class="hexaflex-node" aria-label="([^"]+)">/)
            #expect(links.map { String($0.output.1) } == ACTProcess.allCases.map(\.slug))
            #expect(
                links.map { String($0.output.2) } == [
                    "Present moment", "Values", "Committed action", "Self as context", "Defusion", "Acceptance",
                ])
            #expect(
                html.contains("<svg") && html.contains("Psychological")
                    && html.contains("aria-labelledby=\"hexaflex-title\""))
        }
    }

    @Test(
        "each process page shows the shipped text in the person's language, linked to its neighbours; an unknown one is not found"
    )
    func shippedTexts() async throws {
        try await withTestApp { app in
            // act
            let (status, english) = try await page(app, "/app/act/defusion")
            let (_, german) = try await page(app, "/app/act/defusion", language: "de")
            let (missing, _) = try await page(app, "/app/act/optimism")

            // verify
            #expect(
                status == .ok && english.contains("<h1>Defusion</h1>")
                    && english.contains("stepping back from your thoughts"))
            #expect(
                english.contains("href=\"/app/act/self-as-context\" rel=\"prev\"")
                    && english.contains("href=\"/app/act/acceptance\" rel=\"next\""))
            #expect(german.contains("einen Schritt von den eigenen Gedanken zurückzutreten"))
            #expect(missing == .notFound)
        }
    }

    @Test("the admin's texts replace the shipped ones; an empty one is named and nothing changes")
    func adminTexts() async throws {
        try await withTestApp { app in
            // setup
            _ = try await app.staff("admin", "admin@clinic.example")
            let browser = ConsoleBrowser(app)
            _ = try await browser.signIn("admin@clinic.example")
            let settings = try await browser.get("/console/settings")
            var form = ACTProcess.allCases.flatMap { process in
                Language.allCases.map {
                    (
                        "\(process.rawValue)_\($0.rawValue)",
                        "Our text on \(process.rawValue) (\($0.rawValue)).\n\nSecond paragraph."
                    )
                }
            }

            // act
            let german = try #require(form.firstIndex { $0.0 == "presentMoment_de" })
            form[german].1 = "  "
            let refused = try await browser.post("/console/settings/act", form)
            let (_, unchanged) = try await page(app, "/app/act/present-moment")
            form[german].1 = "Hier und jetzt."
            let saved = try await browser.post("/console/settings/act", form)
            let (_, changed) = try await page(app, "/app/act/values")
            let (_, inGerman) = try await page(app, "/app/act/present-moment", language: "de")

            // verify
            #expect(
                settings.html.contains("id=\"values_en\"")
                    && settings.html.contains("Values are what you want your life to be about"))
            #expect(refused.status == .unprocessableEntity && refused.html.contains("presentMoment_de"))
            #expect(unchanged.contains("paying attention to what is happening here and now"))
            #expect(saved.status == .seeOther)
            #expect(changed.contains("<p>Our text on values (en).</p>") && changed.contains("<p>Second paragraph.</p>"))
            #expect(inGerman.contains("<p>Hier und jetzt.</p>"))
        }
    }
}
