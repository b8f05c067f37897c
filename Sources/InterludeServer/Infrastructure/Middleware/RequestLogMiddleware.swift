import Vapor

/// One log line per answered request: method, route pattern (never the concrete path, which carries ids and the
/// calendar secret; never the query, which carries link tokens), status and duration.
struct RequestLogMiddleware: AsyncMiddleware {
    func respond(to request: Request, chainingTo next: any AsyncResponder) async throws -> Response {
        let start = ContinuousClock.now
        let response = try await next.respond(to: request)
        let elapsed = ContinuousClock.now - start
        let milliseconds = Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
        request.logger.info(
            "\(request.method.rawValue) \(Self.pattern(of: request)) \(response.status.code) \(String(format: "%.1f", milliseconds)) ms"
        )
        return response
    }

    /// The route the request matched, as registered (`/api/v1/patients/:patientID`), or `unmatched`.
    static func pattern(of request: Request) -> String {
        request.route.map { "/" + $0.path.map(\.description).joined(separator: "/") } ?? "unmatched"
    }
}
