import Crypto
import CryptoExtras
import Foundation

/// Seals a patient's intervention answers with a key derived from a passphrase only they know, the same way the
/// patient app does (`Public/js/lib/backup-crypto.js`): PBKDF2-SHA256 derives an AES-256-GCM key and the algorithm's
/// name is bound to the ciphertext as additional data. The server stores the envelope and cannot read it.
public enum InterventionBackup {
    public static let algorithm = "PBKDF2-SHA256+AES-256-GCM"
    public static let iterations = 600_000

    /// What `PUT /api/v1/me/backup` carries: every binary part in base64.
    public struct Envelope: Codable, Sendable, Equatable {
        public var algorithm: String
        public var iterations: Int
        public var salt: String
        public var nonce: String
        public var ciphertext: String

        public init(algorithm: String, iterations: Int, salt: String, nonce: String, ciphertext: String) {
            self.algorithm = algorithm
            self.iterations = iterations
            self.salt = salt
            self.nonce = nonce
            self.ciphertext = ciphertext
        }
    }

    public enum Failure: Error, Equatable {
        case unknownAlgorithm(String)
        case malformed
        /// The passphrase is not the one the backup was sealed with, or the envelope was changed.
        case cannotOpen
    }

    /// Seals the JSON encoding of `value`.
    public static func seal<Value: Encodable>(_ value: Value, passphrase: String) throws -> Envelope {
        try seal(plaintext: JSONEncoder().encode(value), passphrase: passphrase)
    }

    /// Opens an envelope into the value it holds.
    public static func open<Value: Decodable>(_ envelope: Envelope, passphrase: String, as type: Value.Type) throws
        -> Value
    {
        try JSONDecoder().decode(type, from: open(envelope, passphrase: passphrase))
    }

    /// Seals bytes; a fresh random salt and nonce unless given (tests compare with fixed ones).
    public static func seal(
        plaintext: Data, passphrase: String, iterations: Int = iterations, salt: Data? = nil, nonce: Data? = nil
    ) throws -> Envelope {
        let salt = salt ?? Data(SymmetricKey(size: .bits128).withUnsafeBytes { Data($0) })
        let key = try deriveKey(passphrase, salt: salt, iterations: iterations)
        let box = try AES.GCM.seal(
            plaintext, using: key, nonce: try nonce.map(AES.GCM.Nonce.init(data:)) ?? AES.GCM.Nonce(),
            authenticating: Data(algorithm.utf8))
        return Envelope(
            algorithm: algorithm, iterations: iterations, salt: salt.base64EncodedString(),
            nonce: Data(box.nonce).base64EncodedString(), ciphertext: (box.ciphertext + box.tag).base64EncodedString())
    }

    /// The bytes an envelope holds.
    public static func open(_ envelope: Envelope, passphrase: String) throws -> Data {
        guard envelope.algorithm == algorithm else { throw Failure.unknownAlgorithm(envelope.algorithm) }
        guard let salt = Data(base64Encoded: envelope.salt), let nonce = Data(base64Encoded: envelope.nonce),
            let sealed = Data(base64Encoded: envelope.ciphertext), sealed.count >= 16
        else { throw Failure.malformed }
        let key = try deriveKey(passphrase, salt: salt, iterations: envelope.iterations)
        do {
            let box = try AES.GCM.SealedBox(
                nonce: AES.GCM.Nonce(data: nonce), ciphertext: sealed.dropLast(16), tag: sealed.suffix(16))
            return try AES.GCM.open(box, using: key, authenticating: Data(algorithm.utf8))
        } catch {
            throw Failure.cannotOpen
        }
    }

    private static func deriveKey(_ passphrase: String, salt: Data, iterations: Int) throws -> SymmetricKey {
        try KDF.Insecure.PBKDF2.deriveKey(
            from: Data(passphrase.precomposedStringWithCanonicalMapping.utf8), salt: salt, using: .sha256,
            outputByteCount: 32, rounds: iterations)
    }
}
