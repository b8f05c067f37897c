import Foundation
import NIOConcurrencyHelpers
import Vapor

/// A push service on loopback: records every request and answers with the status codes it is told to, then 201.
final class LocalPushEndpoint: Sendable {
    struct Received: Sendable {
        let path: String
        let headers: HTTPHeaders
        let body: Data
    }

    private let app: Application
    private let requests = NIOLockedValueBox<[Received]>([])
    private let answers = NIOLockedValueBox<[HTTPResponseStatus]>([])
    let baseURL: String

    private init(app: Application, baseURL: String) {
        self.app = app
        self.baseURL = baseURL
    }

    static func start() async throws -> LocalPushEndpoint {
        TestLog.start()
        let app = try await Application.make(.testing)
        app.http.server.configuration.hostname = "127.0.0.1"
        app.http.server.configuration.port = 0
        let box = NIOLockedValueBox<LocalPushEndpoint?>(nil)
        app.on(.POST, "push", ":subscription", body: .collect(maxSize: "64kb")) { request -> Response in
            guard let endpoint = box.withLockedValue({ $0 }) else { return Response(status: .serviceUnavailable) }
            let body = request.body.data.map { Data(buffer: $0) } ?? Data()
            endpoint.requests.withLockedValue {
                $0.append(Received(path: request.url.path, headers: request.headers, body: body))
            }
            let status = endpoint.answers.withLockedValue { $0.isEmpty ? HTTPResponseStatus.created : $0.removeFirst() }
            guard (300..<400).contains(status.code) else { return Response(status: status) }
            return Response(status: status, headers: ["Location": "\(endpoint.baseURL)/push/redirected"])
        }
        try await app.server.start(address: nil)
        guard let port = app.http.server.shared.localAddress?.port else { throw Abort(.internalServerError) }
        let endpoint = LocalPushEndpoint(app: app, baseURL: "http://127.0.0.1:\(port)")
        box.withLockedValue { $0 = endpoint }
        return endpoint
    }

    var received: [Received] { requests.withLockedValue { $0 } }

    /// The next requests are answered with these statuses, in order; a redirect points to `/push/redirected` here.
    func answer(_ statuses: HTTPResponseStatus...) {
        answers.withLockedValue { $0.append(contentsOf: statuses) }
    }

    func stop() async throws {
        await app.server.shutdown()
        try await app.asyncShutdown()
    }
}
