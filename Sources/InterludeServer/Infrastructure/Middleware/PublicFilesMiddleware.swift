import Vapor

/// The files of the public directory (the app's scripts, styles and icons), looked up only where one can be: the
/// API's paths never name a file, and asking the file system about each of them cost every API request a round trip
/// to the file system's thread pool.
struct PublicFilesMiddleware: AsyncMiddleware {
    let files: FileMiddleware

    init(directory: String) {
        files = FileMiddleware(publicDirectory: directory, defaultFile: nil)
    }

    func respond(to request: Request, chainingTo next: any AsyncResponder) async throws -> Response {
        if request.requestPath.hasPrefix("/api/") { return try await next.respond(to: request) }
        return try await files.respond(to: request, chainingTo: next)
    }
}
