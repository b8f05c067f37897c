import Foundation
import NIOCore
import Testing
import Vapor

@testable import InterludeServer

/// The test app listening on a real loopback port, for claims about truly parallel requests: each request goes
/// through the network stack and the server's event loops, as a client's would.
struct RunningServer: Sendable {
    let context: TestContext
    let port: Int

    /// Starts the app on a loopback port, sends `count` requests at once, and stops the server again whatever
    /// happened, answering every reply.
    static func parallel(
        _ context: TestContext, _ count: Int,
        _ request: @escaping @Sendable (RunningServer, Int) async throws -> APIClient.Reply
    ) async throws -> [APIClient.Reply] {
        try await serving(context, connections: count) { server in
            try await withThrowingTaskGroup(of: APIClient.Reply.self) { group in
                for index in 0..<count { group.addTask { try await request(server, index) } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
        }
    }

    /// Starts the app on a loopback port, runs `body` against it, and stops the server again whatever happened.
    /// The client waits minutes, not seconds, for an answer: a loaded machine is slow, not broken.
    static func serving<Result: Sendable>(
        _ context: TestContext, connections: Int = 8, _ body: @Sendable (RunningServer) async throws -> Result
    ) async throws -> Result {
        // A connection per request, each opened at once however loaded the machine: no request waits for a pooled one.
        var client = context.app.http.client.configuration
        client.connectionPool = .init(
            idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: max(connections, 8))
        client.timeout = .init(connect: .seconds(120), read: .seconds(300))
        context.app.http.client.configuration = client
        try await context.app.server.start(address: .hostname("127.0.0.1", port: 0))
        do {
            let port = try #require(context.app.http.server.shared.localAddress?.port)
            let result = try await body(RunningServer(context: context, port: port))
            await context.app.server.shutdown()
            return result
        } catch {
            await context.app.server.shutdown()
            throw error
        }
    }

    /// A request to any path of the server, outside the API, with no address of a client's added.
    func raw(_ method: HTTPMethod, _ path: String, headers: HTTPHeaders = [:]) async throws -> ClientResponse {
        var headers = headers
        headers.replaceOrAdd(name: .connection, value: "close")
        return try await context.app.client.send(
            ClientRequest(method: method, url: URI(string: "http://127.0.0.1:\(port)\(path)"), headers: headers))
    }

    /// One API request over HTTP, with the client's token and address.
    func send(
        _ client: APIClient, _ method: HTTPMethod, _ path: String, json: JSONValue? = nil, bytes: Data? = nil,
        headers extra: HTTPHeaders = [:]
    ) async throws -> APIClient.Reply {
        // A connection per request: the server's shutdown waits for open connections, and a pooled one would stay.
        var headers: HTTPHeaders = ["X-Forwarded-For": client.clientAddress, "Connection": "close"]
        headers.add(contentsOf: extra)
        if let token = client.token { headers.bearerAuthorization = BearerAuthorization(token: token) }
        var body: ByteBuffer?
        if let json {
            body = ByteBuffer(data: try JSONEncoder().encode(json))
            headers.contentType = .json
        } else if let bytes {
            body = ByteBuffer(data: bytes)
        }
        let request = ClientRequest(
            method: method, url: URI(string: "http://127.0.0.1:\(port)/api/v1\(path)"), headers: headers, body: body)
        let response = try await context.app.client.send(request)
        let data = response.body.map { Data(buffer: $0) } ?? Data()
        return APIClient.Reply(
            status: response.status, headers: response.headers, body: JSON(data: data),
            text: String(decoding: data, as: UTF8.self),
            data: data)
    }
}
