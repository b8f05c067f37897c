import Vapor

/// What every API answer (problems included) carries: `Cache-Control: no-store`, since most hold a patient's data and no browser or
/// proxy cache should keep them, and an ETag in the quoted form HTTP defines (the generated code writes header
/// values URI-encoded, which turns `"…"` into `%22…%22`).
struct APIResponseHeadersMiddleware: AsyncMiddleware {
    func respond(to request: Request, chainingTo next: any AsyncResponder) async throws -> Response {
        let response = try await next.respond(to: request)
        guard request.requestPath.hasPrefix("/api/") else { return response }
        if !response.headers.contains(name: .cacheControl) {
            response.headers.replaceOrAdd(name: .cacheControl, value: "no-store")
        }
        if let tag = response.headers.first(name: .eTag), tag.contains("%"), let decoded = tag.removingPercentEncoding {
            response.headers.replaceOrAdd(name: .eTag, value: decoded)
        }
        return response
    }
}
