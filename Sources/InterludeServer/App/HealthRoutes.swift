import Fluent
import Vapor

/// Liveness, readiness and metrics for operators and load balancers. Metrics answer a scraper on this machine, or
/// anyone sending `METRICS_TOKEN`; nobody else learns they exist.
struct HealthRoutes {
    struct Status: Content {
        var status: String
    }

    func register(on app: Application) {
        app.get("health") { _ in Status(status: "ok") }
        app.get("ready") { request async -> Response in
            do {
                try await Statements.ping(request.db)
                return try await Status(status: "ready").encodeResponse(for: request)
            } catch {
                request.logger.warning("Database not reachable: \(String(describing: error))")
                let response = Response(status: .serviceUnavailable)
                try? response.content.encode(Status(status: "database unreachable"))
                return response
            }
        }
        app.get("metrics") { request -> Response in
            if let token = request.services.settings.metricsToken {
                let sent = request.headers.bearerAuthorization?.token ?? ""
                guard SecretToken.constantTimeEqual(sent, token) else { throw Abort(.unauthorized) }
            } else if !Self.fromThisMachine(request) {
                throw Abort(.notFound)
            }
            let text = request.services.metrics.emitToString()
            var headers = HTTPHeaders()
            headers.contentType = HTTPMediaType(
                type: "text", subType: "plain", parameters: ["version": "0.0.4", "charset": "utf-8"])
            return Response(status: .ok, headers: headers, body: .init(string: text))
        }
    }

    /// Whether a request comes from this machine itself with no proxy in between, as a scraper beside the server
    /// does: without `METRICS_TOKEN`, only such a request reads the metrics. A request a proxy passed on names its
    /// client in `X-Forwarded-For` or `Forwarded`, and is refused even from a proxy on this machine.
    static func fromThisMachine(_ request: Request) -> Bool {
        guard request.headers[.xForwardedFor].isEmpty, request.headers[.forwarded].isEmpty,
            let address = request.remoteAddress?.ipAddress
        else { return false }
        return address == "::1" || address.hasPrefix("127.") || address.hasPrefix("::ffff:127.")
    }
}
