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
