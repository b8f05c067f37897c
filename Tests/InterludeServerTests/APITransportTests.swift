import Foundation
import HTTPTypes
import OpenAPIRuntime
import Testing
import Vapor

@testable import InterludeServer

/// The transport the generated operations run on, on a running server: what an operation answers arrives byte for
/// byte, whole or streamed, and what a client sends reaches the operation, read by the middleware or as it arrives.
@Suite("API transport")
struct APITransportTests {
    /// An answer of `size` bytes counting up, handed out in chunks of 64 KB.
    static func counting(_ size: Int) -> [UInt8] { (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31) } }

    static func chunks(of bytes: [UInt8]) -> [ArraySlice<UInt8>] {
        stride(from: 0, to: bytes.count, by: 65_536).map { bytes[$0..<min($0 + 65_536, bytes.count)] }
    }

    /// The contract of the operations these tests register: no limits to check.
    static let bounds = try! RequestBounds(
        yaml: """
            openapi: 3.1.0
            paths:
              /items/{id}/own: {get: {}}
              /items/{id}/echo: {post: {}}
              /items/{id}: {delete: {}}
              /large: {get: {}}
              /unsized: {get: {}}
              /other: {get: {}}
            """)

    /// A server with the transport on `/` and, behind the API's body limit (which reads bodies first), on `/read`.
    static func withServer(_ test: (Application, String) async throws -> Void) async throws {
        TestLog.start()
        let app = try await Application.make(.testing)
        try await withListeningApp(
            app,
            setUp: { app in
                let large = counting(APITransport.wholeAnswerLimit + 100_000)
                for (routes, prefix) in [(app as any RoutesBuilder, ""), (app.grouped(APIDoorMiddleware()), "/read")] {
                    let transport = APITransport(
                        routes,
                        replacing: [
                            (
                                .get, prefix + "/items/{id}/own",
                                { _, _, metadata in
                                    var response = HTTPResponse(status: .accepted)
                                    response.headerFields[HTTPField.Name("X-Item")!] = metadata.pathParameters["id"]
                                        .map(String.init)
                                    return (response, HTTPBody("own"))
                                }
                            )
                        ], bounds: bounds, serverPath: prefix)
                    try transport.register(
                        { _, _, _ in
                            (HTTPResponse(status: .ok), HTTPBody("generated"))
                        }, method: .get, path: prefix + "/items/{id}/own")
                    try transport.checkAllReplaced()
                    try transport.register(
                        { request, body, metadata in
                            let received = try await [UInt8](collecting: body ?? HTTPBody(), upTo: 8 << 20)
                            var response = HTTPResponse(status: .ok)
                            response.headerFields[HTTPField.Name("X-Item")!] = metadata.pathParameters["id"].map(
                                String.init)
                            response.headerFields[HTTPField.Name("X-Length")!] =
                                if case .known(let length) = body?.length { "\(length)" } else { "unknown" }
                            response.headerFields[HTTPField.Name("X-Query")!] = request.path
                            return (response, HTTPBody(received))
                        }, method: .post, path: prefix + "/items/{id}/echo")
                    try transport.register(
                        { _, _, _ in
                            (HTTPResponse(status: .ok), HTTPBody(large))
                        }, method: .get, path: prefix + "/large")
                    try transport.register(
                        { _, _, _ in
                            let stream = AsyncStream<ArraySlice<UInt8>> { continuation in
                                for chunk in chunks(of: large) { continuation.yield(chunk) }
                                continuation.finish()
                            }
                            return (HTTPResponse(status: .created), HTTPBody(stream, length: .unknown))
                        }, method: .get, path: prefix + "/unsized")
                    try transport.register(
                        { _, _, _ in
                            (HTTPResponse(status: .noContent), nil)
                        }, method: .delete, path: prefix + "/items/{id}")
                }
            }
        ) { url in
            try await test(app, url.absoluteString)
        }
    }

    @Test("a body reaches the operation whether the middleware read it or not, with the path's parameter and query")
    func requestBodies() async throws {
        try await Self.withServer { app, base in
            let sent = Self.counting(300_000)
            for prefix in ["", "/read"] {
                let response = try await app.client.post(URI(string: "\(base)\(prefix)/items/item-7/echo?x=1")) {
                    $0.body = ByteBuffer(bytes: sent)
                }
                #expect(response.status == .ok)
                #expect(response.body.map { Array($0.readableBytesView) } == sent)
                #expect(response.headers.first(name: "X-Item") == "item-7")
                #expect(response.headers.first(name: "X-Length") == "\(sent.count)")
                #expect(response.headers.first(name: "X-Query") == "\(prefix)/items/item-7/echo?x=1")
            }
        }
    }

    @Test("a small answer of known size goes whole, a large one and one of unknown size are streamed, intact")
    func answers() async throws {
        try await Self.withServer { app, base in
            let large = Self.counting(APITransport.wholeAnswerLimit + 100_000)
            let small = try await app.client.post(URI(string: "\(base)/items/1/echo")) {
                $0.body = ByteBuffer(string: "{}")
            }
            #expect(small.headers.first(name: .contentLength) == "2")
            #expect(small.headers.first(name: .transferEncoding) == nil)
            #expect(small.body.map { String(buffer: $0) } == "{}")

            let sized = try await app.client.get(URI(string: "\(base)/large"))
            #expect(sized.status == .ok)
            #expect(sized.headers.first(name: .contentLength) == "\(large.count)")
            #expect(sized.body.map { Array($0.readableBytesView) } == large)

            let unsized = try await app.client.get(URI(string: "\(base)/unsized"))
            #expect(unsized.status == .created)
            #expect(unsized.headers.first(name: .contentLength) == nil)
            #expect(unsized.headers.first(name: .transferEncoding) == "chunked")
            #expect(unsized.body.map { Array($0.readableBytesView) } == large)

            let empty = try await app.client.delete(URI(string: "\(base)/items/1"))
            #expect(empty.status == .noContent)
            #expect(empty.body?.readableBytes ?? 0 == 0)
        }
    }

    @Test("an operation of the server's own answers in place of the generated one, which must exist")
    func replacements() async throws {
        try await Self.withServer { app, base in
            for prefix in ["", "/read"] {
                let own = try await app.client.get(URI(string: "\(base)\(prefix)/items/7/own"))
                #expect(own.status == .accepted)
                #expect(own.headers.first(name: "X-Item") == "7")
                #expect(own.body.map { String(buffer: $0) } == "own")
            }
        }
        let app = try await Application.make(.testing)
        let unused = APITransport(
            app, replacing: [(.get, "/elsewhere", { _, _, _ in (HTTPResponse(status: .ok), nil) })],
            bounds: Self.bounds,
            serverPath: "")
        try unused.register({ _, _, _ in (HTTPResponse(status: .ok), nil) }, method: .get, path: "/other")
        #expect(throws: APITransport.UnusedReplacement.self) { try unused.checkAllReplaced() }
        try await app.asyncShutdown()
    }
}
