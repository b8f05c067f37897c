import Foundation
import HTTPTypes
import InterludeKit
import OpenAPIRuntime
import Testing
import VaporTesting

@testable import InterludeServer

/// The test app listening on a loopback port while `body` runs, for clients that speak HTTP to it as an app would.
func withListeningServer(_ context: TestContext, _ body: (URL) async throws -> Void) async throws {
    try await withListening(context.app, body)
}

/// `app` listening on a loopback port while `body` runs with its address; the server stops afterwards.
func withListening(_ app: Application, _ body: (URL) async throws -> Void) async throws {
    try await app.server.start(address: .hostname("127.0.0.1", port: 0))
    do {
        let port = try #require(app.http.server.shared.localAddress?.port)
        try await body(URL(string: "http://127.0.0.1:\(port)")!)
    } catch {
        await app.server.shutdown()
        throw error
    }
    await app.server.shutdown()
}

/// An application made for one test: `setUp` adds its routes, it listens while `body` runs, and it is shut down
/// afterwards whatever happened.
func withListeningApp(
    _ app: Application, setUp: (Application) throws -> Void = { _ in }, _ body: (URL) async throws -> Void
) async throws {
    do {
        try setUp(app)
        try await withListening(app, body)
    } catch {
        try await app.asyncShutdown()
        throw error
    }
    try await app.asyncShutdown()
}

/// An SDK client whose connections close after each answer, so the server can stop at the end of a test.
func sdkClient(_ url: URL, address: String = "198.51.100.40") -> InterludeClient {
    InterludeClient(serverURL: url, middlewares: [OneShotConnections(address: address)])
}

/// Asks the server to close each connection after its answer, and names the client's address for the rate limits.
struct OneShotConnections: ClientMiddleware {
    let address: String

    func intercept(
        _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        var request = request
        request.headerFields[.connection] = "close"
        request.headerFields[HTTPField.Name("X-Forwarded-For")!] = address
        return try await next(request, body, baseURL)
    }
}
