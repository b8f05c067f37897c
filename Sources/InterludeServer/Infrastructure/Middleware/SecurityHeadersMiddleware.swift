import Vapor

/// Strict browser security headers on every response: no inline script, no framing, no sniffing; and, when the
/// installation is served over https, HSTS so browsers never fall back to plain http.
struct SecurityHeadersMiddleware: AsyncMiddleware {
    /// Whether `PUBLIC_URL` is https.
    let strictTransport: Bool

    /// A year, with subdomains: the value browsers' HSTS preload lists ask for.
    static let strictTransportSecurity = "max-age=31536000; includeSubDomains"

    static let contentSecurityPolicy = policy(frameAncestors: "'none'")

    /// The app's questionnaire preview is shown inside the console's editor, on the same origin; nothing else may
    /// be framed.
    static let previewPath = "/app/preview"

    static func policy(frameAncestors: String) -> String {
        [
            "default-src 'self'", "script-src 'self'", "style-src 'self'", "img-src 'self' data:",
            "connect-src 'self'", "font-src 'self'", "object-src 'none'", "base-uri 'self'", "form-action 'self'",
            "frame-ancestors \(frameAncestors)", "manifest-src 'self'", "worker-src 'self'",
        ].joined(separator: "; ")
    }

    /// The patient app may ask for the position and the microphone's level (context with answers), from its own
    /// origin only; every other page may use neither, nor the camera.
    static func permissionsPolicy(path: String) -> String {
        let isApp = path == "/app" || path.hasPrefix("/app/")
        return isApp ? "camera=(), microphone=(self), geolocation=(self)" : "camera=(), microphone=(), geolocation=()"
    }

    func respond(to request: Request, chainingTo next: any AsyncResponder) async throws -> Response {
        let response = try await next.respond(to: request)
        let framed = request.requestPath == Self.previewPath
        let headers =
            [
                (
                    "Content-Security-Policy",
                    framed ? Self.policy(frameAncestors: "'self'") : Self.contentSecurityPolicy
                ),
                ("X-Content-Type-Options", "nosniff"),
                ("X-Frame-Options", framed ? "SAMEORIGIN" : "DENY"),
                ("Referrer-Policy", "no-referrer"),
                ("Permissions-Policy", Self.permissionsPolicy(path: request.requestPath)),
            ] + (strictTransport ? [("Strict-Transport-Security", Self.strictTransportSecurity)] : [])
        for (name, value) in headers where !response.headers.contains(name: name) {
            response.headers.replaceOrAdd(name: name, value: value)
        }
        return response
    }
}
