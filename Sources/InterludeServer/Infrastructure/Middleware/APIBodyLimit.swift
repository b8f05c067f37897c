import Vapor

/// Reads an API request's body in full before the handler decodes it, refusing one larger than `limit` with a 413
/// problem: the generated API handlers would otherwise collect whatever size a client sends. File uploads are the
/// exception: their handlers write the body to disk as it arrives, under a limit of their own.
struct APIBodyLimitMiddleware: AsyncMiddleware {
    /// Large enough for the biggest documented body (an answer backup of up to 4 MB of base64).
    var limit = 5 * 1024 * 1024

    /// Whether the request uploads a file, which its handler streams.
    static func streamsBody(_ request: Request) -> Bool {
        let path = request.requestPath
        return (request.method == .POST && path == "/api/v1/me/health-imports")
            || (request.method == .PATCH && path.hasPrefix("/api/v1/me/health-imports/"))
    }

    func respond(to request: Request, chainingTo next: any AsyncResponder) async throws -> Response {
        if Self.streamsBody(request) { return try await next.respond(to: request) }
        if let collected = request.body.data {
            guard collected.readableBytes <= limit else { throw Abort(.payloadTooLarge) }
        } else if request.method != .GET, request.method != .HEAD {
            _ = try await request.body.collect(max: limit).get()
        }
        return try await next.respond(to: request)
    }
}
