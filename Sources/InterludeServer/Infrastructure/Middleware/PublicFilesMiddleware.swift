import Vapor

/// The files of the public directory (the app's scripts, styles and icons), looked up only where one can be: the
/// API's paths never name a file, and asking the file system about each of them cost every API request a round trip
/// to the file system's thread pool.
///
/// Their text (styles, scripts, SVG) is sent gzip-compressed to a browser that accepts it; nothing else is, so no
/// page or API answer that holds a secret is compressed next to text an attacker chooses. A file named under this
/// release's version (`/assets/<version>/js/app.js`, see `PublicAssets`) may be kept for a year without asking; under
/// its plain address, or an earlier release's version, a browser keeps it but asks each time whether it changed
/// (`no-cache` with the file's ETag: an unchanged file costs a 304 without a body).
struct PublicFilesMiddleware: AsyncMiddleware {
    let files: FileMiddleware
    let assets: PublicAssets

    /// The server compresses only the responses that ask for it.
    static let serverCompression = HTTPServer.Configuration.ResponseCompressionConfiguration.disabled(
        initialByteBufferCapacity: HTTPServer.Configuration.ResponseCompressionConfiguration
            .defaultInitialByteBufferCapacity,
        allowRequestOverrides: true)

    static let compressible: Set<String> = [
        "text/css", "text/javascript", "application/javascript", "image/svg+xml", "application/json",
    ]

    /// A year: the longest a cache is asked to keep anything.
    static let versioned = "public, max-age=31536000, immutable"

    init(directory: String, assets: PublicAssets) {
        files = FileMiddleware(publicDirectory: directory, defaultFile: nil)
        self.assets = assets
    }

    func respond(to request: Request, chainingTo next: any AsyncResponder) async throws -> Response {
        if request.requestPath.hasPrefix("/api/") { return try await next.respond(to: request) }
        let versioned = assets.file(of: request.url.path)
        if let versioned { request.url.path = versioned.path }
        let routes = RoutesResponder(next: next)
        let response = try await files.respond(to: request, chainingTo: routes)
        guard request.storage[RoutedKey.self] == nil else { return response }
        response.headers.replaceOrAdd(
            name: .cacheControl, value: versioned?.current == true ? Self.versioned : "no-cache")
        if let type = response.headers.contentType, Self.compressible.contains("\(type.type)/\(type.subType)") {
            response.headers.responseCompression = .enable
            response.headers.replaceOrAdd(name: .vary, value: "Accept-Encoding")
        }
        return response
    }

    private enum RoutedKey: StorageKey {
        typealias Value = Bool
    }

    /// Passes a request that names no file on to the routes, and notes that it did.
    private struct RoutesResponder: AsyncResponder {
        let next: any AsyncResponder

        func respond(to request: Request) async throws -> Response {
            request.storage[RoutedKey.self] = true
            return try await next.respond(to: request)
        }
    }
}
