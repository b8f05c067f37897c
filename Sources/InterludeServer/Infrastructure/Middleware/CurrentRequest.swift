import Vapor

/// Hands the Vapor request to the generated API handlers, which see only the decoded input (see `APIDoorMiddleware`).
enum CurrentRequest {
    @TaskLocal static var value: Request?

    static func get() throws -> Request {
        guard let value else { throw Abort(.internalServerError, reason: "API handler ran outside a request") }
        return value
    }
}
