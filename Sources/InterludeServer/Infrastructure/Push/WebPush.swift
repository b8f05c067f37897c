import AsyncHTTPClient
import Crypto
import Foundation
import JWTKit
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1

/// Message encryption for Web Push (RFC 8291) with the aes128gcm content coding (RFC 8188), in one record.
package enum WebPushEncryption {
    static let recordSize: UInt32 = 4096
    /// The largest payload one record holds (its size less the tag and the padding delimiter).
    static let largestPayload = Int(recordSize) - 17

    enum Failure: Error {
        case badSubscriptionKey
        case payloadTooLarge
    }

    /// Encrypts `plaintext` for the browser whose subscription gave `clientPublicKey` (65 bytes, uncompressed
    /// P-256) and `authSecret` (16 bytes). A fresh server key and salt are used unless given, for tests.
    package static func encrypt(
        _ plaintext: Data, clientPublicKey: Data, authSecret: Data,
        serverKey: P256.KeyAgreement.PrivateKey = .init(), salt: Data = randomSalt()
    ) throws -> Data {
        guard plaintext.count <= largestPayload else { throw Failure.payloadTooLarge }
        guard authSecret.count == 16,
            let clientKey = try? P256.KeyAgreement.PublicKey(x963Representation: clientPublicKey)
        else { throw Failure.badSubscriptionKey }
        let serverPublicKey = serverKey.publicKey.x963Representation
        let shared = try serverKey.sharedSecretFromKeyAgreement(with: clientKey).withUnsafeBytes { Data($0) }
        let keyInfo = Data("WebPush: info".utf8) + [0] + clientPublicKey + serverPublicKey
        let inputKey = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: SymmetricKey(data: shared), salt: authSecret, info: keyInfo, outputByteCount: 32)
        let contentKey = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: inputKey, salt: salt, info: Data("Content-Encoding: aes128gcm".utf8) + [0],
            outputByteCount: 16)
        let nonce = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: inputKey, salt: salt, info: Data("Content-Encoding: nonce".utf8) + [0],
            outputByteCount: 12
        ).withUnsafeBytes { Data($0) }
        // The last (and only) record ends with the delimiter 2 and no further padding.
        let sealed = try AES.GCM.seal(plaintext + [2], using: contentKey, nonce: AES.GCM.Nonce(data: nonce))
        var header = salt
        withUnsafeBytes(of: recordSize.bigEndian) { header.append(contentsOf: $0) }
        header.append(UInt8(serverPublicKey.count))
        header.append(serverPublicKey)
        return header + sealed.ciphertext + sealed.tag
    }

    static func randomSalt() -> Data {
        var generator = SystemRandomNumberGenerator()
        return Data((0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) })
    }
}

/// The server's VAPID identity (RFC 8292): the key it signs with and the public half browsers subscribe with.
package struct VAPIDKey: Sendable {
    let privateKey: P256.Signing.PrivateKey
    let subject: String
    /// Tokens signed before, one per push service origin.
    private let signed = SignedTokens()

    /// How long a token is valid, and how long before its end a fresh one takes over.
    static let tokenLifetime: TimeInterval = 12 * 3600
    static let tokenRenewal: TimeInterval = 3600

    /// The public key as browsers take it in `applicationServerKey`: uncompressed, base64url.
    var publicKey: String { privateKey.publicKey.x963Representation.base64URLEncoded }

    /// The key from the setting, else from `<data dir>/vapid.key`, created on first start.
    static func load(base64URL: String?, subject: String, dataDirectory: String) throws -> VAPIDKey {
        func key(from text: String, name: String) throws -> P256.Signing.PrivateKey {
            guard let data = Data(base64URLEncoded: text),
                let key = try? P256.Signing.PrivateKey(rawRepresentation: data)
            else {
                throw SettingsError.invalid(name: name, value: "(hidden)", expected: "a P-256 private key, base64url")
            }
            return key
        }
        if let base64URL {
            return VAPIDKey(privateKey: try key(from: base64URL, name: "WEBPUSH_VAPID_PRIVATE_KEY"), subject: subject)
        }
        let path = dataDirectory + "/vapid.key"
        if let stored = FileManager.default.contents(atPath: path) {
            let text = String(decoding: stored, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            return VAPIDKey(privateKey: try key(from: text, name: path), subject: subject)
        }
        try FileManager.default.createDirectory(atPath: dataDirectory, withIntermediateDirectories: true)
        let fresh = P256.Signing.PrivateKey()
        guard
            FileManager.default.createFile(
                atPath: path, contents: Data(fresh.rawRepresentation.base64URLEncoded.utf8),
                attributes: [.posixPermissions: 0o600])
        else { throw CocoaError(.fileWriteNoPermission) }
        return VAPIDKey(privateKey: fresh, subject: subject)
    }

    struct Claims: JWTPayload {
        let aud: AudienceClaim
        let exp: ExpirationClaim
        let sub: SubjectClaim

        func verify(using algorithm: some JWTAlgorithm) throws {
            try exp.verifyNotExpired()
        }
    }

    /// The `Authorization` header for a push service at `audience` (the endpoint's origin). One token serves an
    /// origin until an hour before it expires, rather than a signature per message.
    func authorization(audience: String, now: Date) async throws -> String {
        if let header = signed.header(for: audience, at: now) { return header }
        let expires = now.addingTimeInterval(Self.tokenLifetime)
        let keys = await JWTKeyCollection().add(ecdsa: try ES256PrivateKey(backing: privateKey))
        let token = try await keys.sign(
            Claims(
                aud: AudienceClaim(value: audience), exp: ExpirationClaim(value: expires),
                sub: SubjectClaim(value: subject)),
            header: ["typ": "JWT"])
        let header = "vapid t=\(token), k=\(publicKey)"
        signed.keep(header, for: audience, renewAt: expires.addingTimeInterval(-Self.tokenRenewal))
        return header
    }

    private final class SignedTokens: Sendable {
        private let headers = NIOLockedValueBox<[String: (header: String, renewAt: Date)]>([:])

        func header(for audience: String, at now: Date) -> String? {
            headers.withLockedValue { $0[audience] }.flatMap { now < $0.renewAt ? $0.header : nil }
        }

        func keep(_ header: String, for audience: String, renewAt: Date) {
            headers.withLockedValue { $0[audience] = (header, renewAt) }
        }
    }
}

/// What a push service answered.
enum PushOutcome: Sendable, Equatable {
    case delivered(String)
    /// The subscription or token no longer exists; the device is disabled.
    case gone(String)
    /// Worth another try later.
    case retry(String)
    case failed(String)
}

/// Sends one encrypted message to a browser's push service.
package struct WebPushSender: Sendable {
    let clients: PushClients
    package let key: VAPIDKey

    package init(clients: PushClients, key: VAPIDKey) {
        self.clients = clients
        self.key = key
    }

    struct Message: Sendable {
        let endpoint: String
        let p256dh: String
        let auth: String
        let payload: Data
        /// Replaces an undelivered message with the same topic, so a repeat after a crash shows once.
        let topic: String
        let timeToLive: Int
    }

    func send(_ message: Message, now: Date) async -> PushOutcome {
        do {
            guard let url = URL(string: message.endpoint), let scheme = url.scheme, let host = url.host else {
                return .gone("endpoint is not a URL")
            }
            guard let publicKey = Data(base64URLEncoded: message.p256dh),
                let secret = Data(base64URLEncoded: message.auth)
            else { return .gone("subscription keys are not base64url") }
            let body = try WebPushEncryption.encrypt(message.payload, clientPublicKey: publicKey, authSecret: secret)
            let origin = "\(scheme)://\(host)" + (url.port.map { ":\($0)" } ?? "")
            var request = HTTPClientRequest(url: message.endpoint)
            request.method = .POST
            request.headers.add(name: "Authorization", value: try await key.authorization(audience: origin, now: now))
            request.headers.add(name: "TTL", value: String(max(0, message.timeToLive)))
            request.headers.add(name: "Content-Encoding", value: "aes128gcm")
            request.headers.add(name: "Content-Type", value: "application/octet-stream")
            request.headers.add(name: "Urgency", value: "normal")
            request.headers.add(name: "Topic", value: message.topic)
            request.body = .bytes(ByteBuffer(data: body))
            let client = try await clients.client(for: host)
            let response = try await client.execute(request, timeout: .seconds(15))
            let status = response.status
            switch status.code {
            case 200..<300: return .delivered("webpush \(status.code)")
            case 404, 410: return .gone("webpush \(status.code)")
            case 429, 500..<600: return .retry("webpush \(status.code)")
            default: return .failed("webpush \(status.code)")
            }
        } catch WebPushEncryption.Failure.badSubscriptionKey {
            return .gone("subscription keys are not valid")
        } catch PushClients.Refusal.insideAddress {
            return .gone("webpush \(PushClients.Refusal.insideAddress)")
        } catch {
            return .retry("webpush \(String(describing: error))")
        }
    }
}
