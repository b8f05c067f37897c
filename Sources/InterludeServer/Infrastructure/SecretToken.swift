import Crypto
import Foundation

/// A random 256-bit secret handed to a client once (bearer token, link token, cookie) and stored only as a hash.
package struct SecretToken: Sendable {
    package let value: String

    init(value: String) {
        self.value = value
    }

    package static func generate() -> SecretToken {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        return SecretToken(value: Data(bytes).base64URLEncoded)
    }

    /// The SHA-256 of the secret in hex, the only form that reaches the database.
    package var hash: String { Self.hash(value) }

    static func hash(_ value: String) -> String {
        SHA256.hash(data: Data(value.utf8)).lowercaseHex
    }

    /// Compares a sent secret with the expected one in time that does not depend on where they differ.
    static func constantTimeEqual(_ sent: String, _ expected: String) -> Bool {
        let left = Array(SHA256.hash(data: Data(sent.utf8)))
        let right = Array(SHA256.hash(data: Data(expected.utf8)))
        return zip(left, right).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
    }
}

extension Data {
    package init?(base64URLEncoded text: String) {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 = base64.trimmingCharacters(in: CharacterSet(charactersIn: "="))
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        self.init(base64Encoded: base64)
    }

    /// Base64 with the URL-safe alphabet and without padding, in one pass over the standard encoding.
    package var base64URLEncoded: String {
        let standard = base64EncodedString().utf8
        var safe: [UInt8] = []
        safe.reserveCapacity(standard.count)
        for character in standard {
            switch character {
            case UInt8(ascii: "+"): safe.append(UInt8(ascii: "-"))
            case UInt8(ascii: "/"): safe.append(UInt8(ascii: "_"))
            case UInt8(ascii: "="): continue
            default: safe.append(character)
            }
        }
        return String(decoding: safe, as: UTF8.self)
    }
}
