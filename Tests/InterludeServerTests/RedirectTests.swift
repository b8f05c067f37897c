import Foundation
import Testing
import VaporTesting

@testable import InterludeServer

/// The `next=` and `back=` parameters of the language switch, the console sign-in and the alert form never send
/// the browser to another site, whatever encoding hides the second slash.
@Suite("No open redirects")
struct RedirectTests {
    static let attacks = [
        "/%09/evil.example", "//evil.example", "/%5Cevil.example", "%0A//evil.example", "https://evil.example",
    ]

    @Test("the language switch returns to this site only", arguments: attacks)
    func language(next: String) async throws {
        try await withTestApp { app in
            // act
            let response = try await app.app.testing().sendRequest(.GET, "/language?set=de&next=\(next)")
            // verify
            #expect(response.status == .seeOther)
            #expect(response.headers.first(name: .location) == "/app")
        }
    }

    @Test("the language switch keeps a path of this site")
    func languageKeepsLocal() async throws {
        try await withTestApp { app in
            let response = try await app.app.testing().sendRequest(.GET, "/language?set=de&next=/app/profile")
            #expect(response.headers.first(name: .location) == "/app/profile")
        }
    }

    @Test(
        "the console sign-in goes home instead of elsewhere",
        arguments: attacks.map { $0.removingPercentEncoding ?? $0 })
    func consoleLogin(next: String) async throws {
        try await withTestApp { app in
            // setup
            _ = try await app.staff("therapist", "berger@praxis.example")
            let console = ConsoleBrowser(app)
            let form = try await console.get("/console/login")
            let token = try #require(ConsoleBrowser.value(of: "_csrf", in: form.html))
            // act
            let signedIn = try await console.post(
                "/console/login",
                [("email", "berger@praxis.example"), ("password", TestContext.password), ("next", next)],
                csrf: token)
            // verify
            #expect(signedIn.status == .seeOther)
            #expect(signedIn.location?.hasPrefix("/console") == true)
        }
    }
}
