import Foundation
import Testing
import VaporTesting

@testable import InterludeServer

@Suite("Operations endpoints")
struct HealthTests {
    @Test("health, readiness, metrics and the API contract are served")
    func endpoints() async throws {
        try await withTestApp { app in
            try await app.app.testing().test(.GET, "/health") { response in
                #expect(response.status == .ok)
            }
            try await app.app.testing().test(.GET, "/ready") { response in
                #expect(response.status == .ok)
                #expect(response.body.string.contains("ready"))
            }
            _ = try await app.api.send(.GET, "/me")
            try await app.app.testing().test(.GET, "/metrics") { response in
                #expect(response.status == .ok)
                #expect(response.headers.contentType?.subType == "plain")
                #expect(response.body.string.contains("interlude_http_requests_total{"))
                #expect(response.body.string.contains("status=\"401\""))
                #expect(response.body.string.contains("interlude_http_request_duration_seconds_bucket"))
            }
            try await app.app.testing().test(.GET, "/api/v1/openapi.yaml") { response in
                #expect(response.status == .ok)
                #expect(response.body.string.hasPrefix("openapi: 3.1.0"))
                #expect(response.body.string.contains("/accounts/email-available"))
            }
        }
    }

    @Test("with METRICS_TOKEN set, metrics need it as a bearer token")
    func metricsToken() async throws {
        try await withTestApp(settings: { $0.metricsToken = "scrape-secret" }) { app in
            // act
            let anonymous = try await app.app.testing().sendRequest(.GET, "/metrics")
            let wrong = try await app.app.testing().sendRequest(.GET, "/metrics", headers: ["Authorization": "Bearer guess"])
            let right = try await app.app.testing().sendRequest(.GET, "/metrics", headers: ["Authorization": "Bearer scrape-secret"])
            // verify
            #expect(anonymous.status == .unauthorized)
            #expect(wrong.status == .unauthorized)
            #expect(right.status == .ok)
            #expect(right.body.string.contains("interlude_http_requests_total"))
        }
    }

    @Test("served over https, every answer asks for HSTS; API answers are never cached")
    func transportHeaders() async throws {
        try await withTestApp { app in
            let health = try await app.app.testing().sendRequest(.GET, "/health")
            #expect(health.headers.first(name: "Strict-Transport-Security") == SecurityHeadersMiddleware.strictTransportSecurity)
            let me = try await app.api.send(.GET, "/me")
            #expect(me.headers.first(name: .cacheControl) == "no-store")
        }
        try await withTestApp(settings: { $0.publicURL = "http://localhost:8080" }) { app in
            let health = try await app.app.testing().sendRequest(.GET, "/health")
            #expect(health.headers.first(name: "Strict-Transport-Security") == nil)
        }
    }

    @Test("unknown API paths and unsupported methods answer with problem+json, never a stack trace")
    func unknownPaths() async throws {
        try await withTestApp { app in
            let missing = try await app.api.send(.GET, "/nothing-here")
            #expect(missing.status == .notFound)
            #expect(missing.headers.contentType?.subType == "problem+json")
            #expect(missing.body["status"].int == 404)
            try await app.app.testing().test(.GET, "/console/nothing-here") { response in
                #expect(response.status == .notFound || response.status == .seeOther)
            }
        }
    }

    @Test("pages carry a strict content security policy")
    func securityHeaders() async throws {
        try await withTestApp { app in
            try await app.app.testing().test(.GET, "/app/login") { response in
                #expect(response.status == .ok)
                let policy = response.headers.first(name: "Content-Security-Policy") ?? ""
                #expect(policy.contains("script-src 'self'"))
                #expect(!policy.contains("unsafe-inline"))
                #expect(response.headers.first(name: "X-Frame-Options") == "DENY")
            }
        }
    }
}
