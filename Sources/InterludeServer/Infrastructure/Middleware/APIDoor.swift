import InterludeCore
import Vapor

/// The API's door, in front of every operation: it reads the request's body in full, refusing one larger than
/// `limit` with a 413 problem (the generated handlers would otherwise collect whatever size a client sends), refuses
/// a control character where a person types text as `TextDoorMiddleware` does, and hands the request to the handlers
/// (`CurrentRequest`). File uploads are the exception: their handlers write the body to disk as it arrives, under a
/// limit of their own.
///
/// It works on the request's futures rather than as an asynchronous middleware: each of those starts a task of its
/// own and waits for the next one's, and this runs in front of every API request.
struct APIDoorMiddleware: Middleware {
    /// Large enough for the biggest documented body (an answer backup of up to 4 MB of base64).
    static let limit = 5 * 1024 * 1024

    var limit = Self.limit

    /// Whether the request uploads a file, which its handler streams.
    static func streamsBody(_ request: Request) -> Bool {
        let path = request.requestPath
        return (request.method == .POST && path == "/api/v1/me/health-imports")
            || (request.method == .PATCH && path.hasPrefix("/api/v1/me/health-imports/"))
    }

    func respond(to request: Request, chainingTo next: any Responder) -> EventLoopFuture<Response> {
        body(of: request).flatMapThrowing { body in
            if let field = TextDoorMiddleware.controlCharacterField(in: request, body: body) {
                throw ValidationFailure(field: field, code: .controlCharacter)
            }
        }.flatMap {
            // The handler's task starts inside `next`, and takes the value with it.
            CurrentRequest.$value.withValue(request) { next.respond(to: request) }
        }
    }

    /// The body read in full, for the text door; nil for an upload, which its handler reads, and for a GET or HEAD,
    /// whose body the handlers ignore (one that came along is held to the limit all the same).
    private func body(of request: Request) -> EventLoopFuture<ByteBuffer?> {
        if Self.streamsBody(request) { return request.eventLoop.makeSucceededFuture(nil) }
        let reads = request.method != .GET && request.method != .HEAD
        if let collected = request.body.data {
            guard collected.readableBytes <= limit else {
                return request.eventLoop.makeFailedFuture(Abort(.payloadTooLarge))
            }
            return request.eventLoop.makeSucceededFuture(reads ? collected : nil)
        }
        return reads ? request.body.collect(max: limit) : request.eventLoop.makeSucceededFuture(nil)
    }
}
