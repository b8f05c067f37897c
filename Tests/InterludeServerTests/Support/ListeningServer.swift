import Foundation
import HTTPTypes
import InterludeKit
import OpenAPIRuntime
import Testing
import VaporTesting

@testable import InterludeServer

/// The test app listening on a loopback port while `body` runs, for clients that speak HTTP to it as an app would.
func withListeningServer(_ context: TestContext, _ body: (URL) async throws -> Void) async throws {
    try await context.app.server.start(address: .hostname("127.0.0.1", port: 0))
    do {
        let port = try #require(context.app.http.server.shared.localAddress?.port)
        try await body(URL(string: "http://127.0.0.1:\(port)")!)
    } catch {
        await context.app.server.shutdown()
        throw error
    }
    await context.app.server.shutdown()
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
