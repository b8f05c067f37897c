import AsyncHTTPClient
import Crypto
import Foundation
import InterludeCore
import JWTKit
import NIOCore
import NIOSSL

/// Token-based APNs over HTTP/2: a provider token (ES256 JWT) renewed well within the hour Apple allows.
package actor APNsSender {
    let settings: Settings.APNs
    private let clients: PushClients
    private let keys: JWTKeyCollection
    private var token: (value: String, issuedAt: Date)?

    /// Apple refuses tokens older than an hour and asks for renewal no more often than every 20 minutes.
    static let tokenLifetime: TimeInterval = 40 * 60

    struct Claims: JWTPayload {
        let iss: IssuerClaim
        let iat: IssuedAtClaim

        func verify(using algorithm: some JWTAlgorithm) throws {}
    }

    init(settings: Settings.APNs, allowLoopback: Bool) async throws {
        guard let pem = FileManager.default.contents(atPath: settings.keyFile) else {
            throw SettingsError.invalid(name: "APNS_KEY_FILE", value: settings.keyFile, expected: "a readable .p8 file")
        }
        let key: ES256PrivateKey
        do {
            key = try ES256PrivateKey(pem: String(decoding: pem, as: UTF8.self))
        } catch {
            throw SettingsError.invalid(name: "APNS_KEY_FILE", value: settings.keyFile, expected: "a P-256 key in PEM")
        }
        var tls = TLSConfiguration.makeClientConfiguration()
        if let caFile = settings.caFile {
            tls.additionalTrustRoots = [.file(caFile)]
        }
        self.settings = settings
        self.clients = PushClients(allowLoopback: allowLoopback, tls: tls)
        self.keys = await JWTKeyCollection().add(ecdsa: key, kid: JWKIdentifier(string: settings.keyID))
    }

    func shutdown() async {
        await clients.shutdown()
    }

    private func providerToken(now: Date) async throws -> String {
        if let token, now.timeIntervalSince(token.issuedAt) < Self.tokenLifetime { return token.value }
        let value = try await keys.sign(
            Claims(iss: IssuerClaim(value: settings.teamID), iat: IssuedAtClaim(value: now)),
            kid: JWKIdentifier(string: settings.keyID))
        token = (value, now)
        return value
    }

    struct Message: Sendable {
        let deviceToken: String
        let title: String
        let body: String
        let path: String
        let notificationID: UUID
        /// Replaces an undelivered notification with the same id, so a repeat after a crash shows once.
        let collapseID: String
        let expiresAt: Date
    }

    func send(_ message: Message, now: Date) async -> PushOutcome {
        do {
            struct Payload: Encodable {
                struct APS: Encodable {
                    struct Alert: Encodable {
                        let title: String
                        let body: String
                    }
                    let alert: Alert
                    let sound = "default"
                }
                let aps: APS
                let path: String
                let notificationId: String
            }
            let payload = Payload(
                aps: .init(alert: .init(title: message.title, body: message.body)), path: message.path,
                notificationId: message.notificationID.lowercasedText)
            guard let host = URL(string: settings.endpoint)?.host else { return .failed("apns endpoint is not a URL") }
            let client = try await clients.client(for: host)
            var request = HTTPClientRequest(url: "\(settings.endpoint)/3/device/\(message.deviceToken)")
            request.method = .POST
            request.headers.add(name: "authorization", value: "bearer \(try await providerToken(now: now))")
            request.headers.add(name: "apns-topic", value: settings.topic)
            request.headers.add(name: "apns-push-type", value: "alert")
            request.headers.add(name: "apns-priority", value: "10")
            request.headers.add(
                name: "apns-expiration", value: message.expiresAt.timeIntervalSince1970.rounded(.down).plainText())
            request.headers.add(name: "apns-collapse-id", value: message.collapseID)
            request.headers.add(name: "content-type", value: "application/json")
            request.body = .bytes(ByteBuffer(data: try JSONEncoder().encode(payload)))
            let response = try await client.execute(request, timeout: .seconds(15))
            let reason = try await Self.reason(of: response)
            switch response.status.code {
            case 200:
                return .delivered("apns 200 \(response.headers.first(name: "apns-id") ?? "")")
            case 410:
                return .gone("apns 410 \(reason)")
            case 400 where reason == "BadDeviceToken" || reason == "DeviceTokenNotForTopic":
                return .gone("apns 400 \(reason)")
            case 403 where reason == "ExpiredProviderToken":
                token = nil
                return .retry("apns 403 \(reason)")
            case 429, 500..<600:
                return .retry("apns \(response.status.code) \(reason)")
            default:
                return .failed("apns \(response.status.code) \(reason)")
            }
        } catch let refusal as PushClients.Refusal {
            return .failed("apns \(refusal)")
        } catch {
            return .retry("apns \(String(describing: error))")
        }
    }

    private static func reason(of response: HTTPClientResponse) async throws -> String {
        let body = try await response.body.collect(upTo: 64 * 1024)
        struct Answer: Decodable { let reason: String? }
        return (try? JSONDecoder().decode(Answer.self, from: body))?.reason ?? ""
    }
}
