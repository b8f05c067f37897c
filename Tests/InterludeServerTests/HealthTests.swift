import Foundation
import Testing
import VaporTesting

@testable import InterludeServer

@Suite("Operations endpoints")
struct HealthTests {
    @Test(
        "health, readiness and the API contract are served",
        arguments: [("/health", "ok"), ("/ready", "ready"), ("/api/v1/openapi.yaml", "/accounts/email-available")])
    func endpoints(_ path: String, says: String) async throws {
        try await withTestApp { app in
            // act
            let response = try await app.app.testing().sendRequest(.GET, path)

            // verify
            #expect(response.status == .ok)
            #expect(response.body.string.contains(says))
        }
    }

    @Test("the API contract is OpenAPI 3.1")
    func contractVersion() async throws {
        try await withTestApp { app in
            // act
            let response = try await app.app.testing().sendRequest(.GET, "/api/v1/openapi.yaml")

            // verify
            #expect(response.body.string.hasPrefix("openapi: 3.1.0"))
        }
    }

    @Test("metrics count requests by status and time them, in Prometheus' text format, for a scraper on this machine")
    func metrics() async throws {
        try await withTestApp { app in
            // setup: one refused request
            _ = try await app.api.send(.GET, "/me")

            // act: over loopback, through a proxy, and from nowhere known
            let (response, proxied) = try await RunningServer.serving(app) { server in
                (
                    try await server.raw(.GET, "/metrics"),
                    try await server.raw(.GET, "/metrics", headers: ["X-Forwarded-For": "203.0.113.9"])
                )
            }
            let unknown = try await app.app.testing().sendRequest(.GET, "/metrics")

            // verify
            let text = response.body.map { String(buffer: $0) } ?? ""
            #expect(
                proxied.status == .notFound && !(proxied.body.map { String(buffer: $0) } ?? "").contains("interlude_"))
            #expect(unknown.status == .notFound)
            #expect(response.status == .ok)
            #expect(response.headers.contentType?.subType == "plain")
            #expect(text.contains("interlude_http_requests_total{"))
            #expect(text.contains("status=\"401\""))
            #expect(text.contains("interlude_http_request_duration_seconds_bucket"))
        }
    }

    @Test(
        "with METRICS_TOKEN set, metrics need it as a bearer token",
        arguments: [
            ("no token", nil as String?, HTTPStatus.unauthorized), ("a guess", "guess", .unauthorized),
            ("the token", "scrape-secret", .ok),
        ])
    func metricsToken(_ label: String, token: String?, status: HTTPStatus) async throws {
        try await withTestApp(settings: { $0.metricsToken = "scrape-secret" }) { app in
            // setup: one request to count
            _ = try await app.api.send(.GET, "/me")

            // act
            let response = try await app.app.testing().sendRequest(
                .GET, "/metrics", headers: token.map { ["Authorization": "Bearer \($0)"] } ?? [:])

            // verify
            #expect(response.status == status, "\(label)")
            #expect(response.body.string.contains("interlude_http_requests_total") == (status == .ok), "\(label)")
        }
    }

    @Test("served over https, every answer asks for HSTS; API answers are never cached")
    func transportHeaders() async throws {
        try await withTestApp { app in
            // act
            let health = try await app.app.testing().sendRequest(.GET, "/health")
            let me = try await app.api.send(.GET, "/me")

            // verify
            #expect(
                health.headers.first(name: "Strict-Transport-Security")
                    == SecurityHeadersMiddleware.strictTransportSecurity)
            #expect(me.headers.first(name: .cacheControl) == "no-store")
        }
    }

    @Test("served over plain http, for a local trial, no answer asks for HSTS")
    func noHSTSOverHTTP() async throws {
        try await withTestApp(settings: { $0.publicURL = "http://localhost:8080" }) { app in
            // act
            let health = try await app.app.testing().sendRequest(.GET, "/health")

            // verify
            #expect(health.headers.first(name: "Strict-Transport-Security") == nil)
        }
    }

    @Test("unknown API paths answer with problem+json, never a stack trace")
    func unknownAPIPath() async throws {
        try await withTestApp { app in
            // act
            let missing = try await app.api.send(.GET, "/nothing-here")

            // verify
            #expect(missing.status == .notFound)
            #expect(missing.headers.contentType?.subType == "problem+json")
            #expect(try missing.decoded(Components.Schemas.Problem.self).status == 404)
        }
    }

    @Test("an unknown console page sends to sign-in or is not found, never an error")
    func unknownConsolePath() async throws {
        try await withTestApp { app in
            // act
            let response = try await app.app.testing().sendRequest(.GET, "/console/nothing-here")

            // verify
            #expect(response.status == .notFound || response.status == .seeOther)
        }
    }

    @Test(
        "a page and the service worker name this release's styles and scripts under their version; a page names its module ahead"
    )
    func versionedAssets() async throws {
        try await withTestApp { app in
            // act
            let page = try await app.app.testing().sendRequest(.GET, "/app/login")
            let worker = try await app.app.testing().sendRequest(.GET, "/app/sw.js")

            // verify
            let prefix = try #require(app.app.publicAssets).prefix
            #expect(prefix.count == "/assets/".count + 12)
            #expect(page.body.string.contains(#"href="\#(prefix)/css/interlude.css""#))
            #expect(page.body.string.contains(#"src="\#(prefix)/js/app.js""#))
            #expect(page.body.string.contains(#"<link rel="modulepreload" href="\#(prefix)/js/pages/login.js">"#))
            #expect(worker.body.string.contains(#"const ASSETS = "\#(prefix)";"#))
            #expect(worker.headers.first(name: .cacheControl) == "no-cache")
        }
    }

    @Test("pages carry a strict content security policy and may not be framed")
    func securityHeaders() async throws {
        try await withTestApp { app in
            // act
            let response = try await app.app.testing().sendRequest(.GET, "/app/login")

            // verify
            #expect(response.status == .ok)
            let policy = response.headers.first(name: "Content-Security-Policy") ?? ""
            #expect(policy.contains("script-src 'self'"))
            #expect(!policy.contains("unsafe-inline"))
            #expect(response.headers.first(name: "X-Frame-Options") == "DENY")
        }
    }

    @Test("the questionnaire preview may be framed by pages of the same origin only; no other page may be framed")
    func previewFraming() async throws {
        try await withTestApp { app in
            // act
            let preview = try await app.app.testing().sendRequest(.GET, "/app/preview")
            let previewLookalike = try await app.app.testing().sendRequest(.GET, "/app/preview/../login")
            let questionnaire = try await app.app.testing().sendRequest(.GET, "/app/questionnaires/anything")

            // verify
            #expect(preview.status == .ok)
            #expect(preview.headers.first(name: "X-Frame-Options") == "SAMEORIGIN")
            #expect(preview.headers.first(name: "Content-Security-Policy")?.contains("frame-ancestors 'self'") == true)
            for page in [previewLookalike, questionnaire] {
                #expect(page.headers.first(name: "X-Frame-Options") == "DENY")
                #expect(page.headers.first(name: "Content-Security-Policy")?.contains("frame-ancestors 'none'") == true)
            }
        }
    }

    @Test(
        "the patient app may ask for the position and the microphone from its own origin; the console and the API may not"
    )
    func permissionsPolicy() async throws {
        try await withTestApp { app in
            // act
            let appPage = try await app.app.testing().sendRequest(.GET, "/app/login")
            let consolePage = try await app.app.testing().sendRequest(.GET, "/console/login")
            let api = try await app.app.testing().sendRequest(.GET, "/api/v1/openapi.yaml")

            // verify
            #expect(
                appPage.headers.first(name: "Permissions-Policy") == "camera=(), microphone=(self), geolocation=(self)")
            #expect(consolePage.headers.first(name: "Permissions-Policy") == "camera=(), microphone=(), geolocation=()")
            #expect(api.headers.first(name: "Permissions-Policy") == "camera=(), microphone=(), geolocation=()")
        }
    }
}
