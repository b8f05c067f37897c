import AsyncHTTPClient
import Crypto
import Fluent
import Foundation
import InterludeCore
import InterludeServer
import NIOConcurrencyHelpers
import NIOCore
import Vapor

/// Sends many notifications through the dispatcher to a push endpoint on loopback, and compares the rate with
/// plain POSTs of the same size to the same endpoint (the ceiling) in the same run.
struct DispatcherBenchmark {
    let app: Application

    struct Result {
        let notifications: Int
        let dispatchSeconds: Double
        let ceilingSeconds: Double

        var dispatchRate: Double { Double(notifications) / dispatchSeconds }
        var ceilingRate: Double { Double(notifications) / ceilingSeconds }

        var report: String {
            [
                "notifications: \(notifications)",
                String(format: "dispatcher: %.2f s, %.0f notifications/s", dispatchSeconds, dispatchRate),
                String(
                    format: "plain POSTs to the same endpoint: %.2f s, %.0f requests/s", ceilingSeconds, ceilingRate),
                String(format: "ratio (dispatcher / plain POSTs): %.2f", dispatchRate / ceilingRate),
            ].joined(separator: "\n")
        }
    }

    func run(notifications count: Int) async throws -> Result {
        let endpoint = try await LoopbackPushEndpoint.start()
        let services = app.interlude
        let now = services.clock.now
        let people = try await BenchmarkPopulation.make(count, on: app.db, now: now)
        let browserKey = P256.KeyAgreement.PrivateKey().publicKey.x963Representation.base64URLEncoded
        let secret = Data((0..<16).map { _ in UInt8.random(in: 0...255) }).base64URLEncoded
        for batch in people.patients.batches() {
            try await batch.map {
                DeviceRecord(
                    userID: $0.id!, platform: .webpush, address: "\(endpoint.baseURL)/push/\($0.id!)",
                    p256dh: browserKey,
                    auth: secret, now: now)
            }.create(on: app.db)
        }
        try await NotificationOutbox(database: app.db, localizer: services.localizer).enqueue(
            people.patients.map {
                NotificationOutbox.Item(
                    userID: $0.id!, category: .messages, dedupeKey: "benchmark:\($0.id!)", title: "Benchmark",
                    body: "A message", path: "/app", dueAt: now, expiresAt: now.addingTimeInterval(3600))
            },
            now: now)
        // The endpoint is on loopback, which the server's own channels refuse unless told otherwise.
        let clients = PushClients(allowLoopback: true)
        let channels = NotificationChannels(
            webPush: WebPushSender(clients: clients, key: app.notificationChannels.webPush.key), apns: nil)
        let dispatcher = NotificationDispatcher(database: app.db, services: services, channels: channels)
        let clock = ContinuousClock()
        let dispatching = try await clock.measure {
            while try await dispatcher.dispatch(now: now, limit: 500).sent > 0 {}
        }
        await clients.shutdown()
        let delivered = endpoint.count
        let payload = try WebPushEncryption.encrypt(
            Data(repeating: 65, count: 180), clientPublicKey: Data(base64URLEncoded: browserKey)!,
            authSecret: Data(base64URLEncoded: secret)!)
        let client = app.http.client.shared
        let ceiling = try await clock.measure {
            for patient in people.patients {
                var request = HTTPClientRequest(url: "\(endpoint.baseURL)/push/\(patient.id!)")
                request.method = .POST
                request.headers.add(name: "Content-Encoding", value: "aes128gcm")
                request.body = .bytes(ByteBuffer(data: payload))
                _ = try await client.execute(request, timeout: .seconds(15))
            }
        }
        try await endpoint.stop()
        guard delivered == count else {
            throw CommandFailure(message: "The endpoint received \(delivered) of \(count) notifications.")
        }
        return Result(notifications: count, dispatchSeconds: dispatching.seconds, ceilingSeconds: ceiling.seconds)
    }
}

/// A push service on loopback that takes every message with 201 and counts them.
final class LoopbackPushEndpoint: Sendable {
    private let app: Application
    private let received = NIOLockedValueBox(0)
    let baseURL: String

    private init(app: Application, baseURL: String) {
        self.app = app
        self.baseURL = baseURL
    }

    static func start() async throws -> LoopbackPushEndpoint {
        let app = try await Application.make(.production)
        app.logger.logLevel = .error
        app.http.server.configuration.hostname = "127.0.0.1"
        app.http.server.configuration.port = 0
        let counter = NIOLockedValueBox<LoopbackPushEndpoint?>(nil)
        app.on(.POST, "push", ":subscription", body: .collect(maxSize: "64kb")) { _ -> HTTPStatus in
            counter.withLockedValue { $0 }?.received.withLockedValue { $0 += 1 }
            return .created
        }
        try await app.server.start(address: nil)
        guard let port = app.http.server.shared.localAddress?.port else { throw Abort(.internalServerError) }
        let endpoint = LoopbackPushEndpoint(app: app, baseURL: "http://127.0.0.1:\(port)")
        counter.withLockedValue { $0 = endpoint }
        return endpoint
    }

    var count: Int { received.withLockedValue { $0 } }

    func stop() async throws {
        await app.server.shutdown()
        try await app.asyncShutdown()
    }
}
