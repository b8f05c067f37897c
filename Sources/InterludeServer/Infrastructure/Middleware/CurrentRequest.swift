import Vapor

/// Hands the Vapor request to the generated API handlers, which see only the decoded input.
enum CurrentRequest {
    @TaskLocal static var value: Request?

    static func get() throws -> Request {
        guard let value else { throw Abort(.internalServerError, reason: "API handler ran outside a request") }
        return value
    }
}

struct CurrentRequestMiddleware: AsyncMiddleware {
    func respond(to request: Request, chainingTo next: any AsyncResponder) async throws -> Response {
        try await CurrentRequest.$value.withValue(request) {
            try await next.respond(to: request)
        }
    }
}
