import Crypto
import Foundation
import Testing

@testable import InterludeServer

@Suite("VAPID tokens")
struct VAPIDTokenTests {
    let key = VAPIDKey(privateKey: P256.Signing.PrivateKey(), subject: "mailto:ops@example.org")
    let start = Date(timeIntervalSince1970: 1_800_000_000)

    /// The claims of the token in an `Authorization: vapid t=…, k=…` header.
    func claims(_ header: String) throws -> [String: Any] {
        let token = try #require(header.split(separator: " ").dropFirst().first?.dropFirst(2).dropLast())
        let part = try #require(token.split(separator: ".").dropFirst().first)
        let data = try #require(Data(base64URLEncoded: String(part)))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    @Test("one token serves a push service until an hour before it expires, another origin gets its own")
    func reusedPerOrigin() async throws {
        let first = try await key.authorization(audience: "https://push.example", now: start)
        let later = try await key.authorization(
            audience: "https://push.example", now: start.addingTimeInterval(10 * 3600))
        let other = try await key.authorization(audience: "https://other.example", now: start)
        #expect(later == first)
        #expect(other != first)
        #expect(try claims(first)["aud"] as? String == "https://push.example")
        #expect(try claims(other)["aud"] as? String == "https://other.example")
        #expect((try claims(first)["exp"] as? Double).map { Int($0) } == Int(start.timeIntervalSince1970) + 12 * 3600)

        let renewed = try await key.authorization(
            audience: "https://push.example", now: start.addingTimeInterval(11 * 3600))
        #expect(renewed != first)
        #expect((try claims(renewed)["exp"] as? Double).map { Int($0) } == Int(start.timeIntervalSince1970) + 23 * 3600)
    }
}
