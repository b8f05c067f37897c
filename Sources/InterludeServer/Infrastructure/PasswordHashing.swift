import Crypto
import Foundation
import Vapor

/// bcrypt on the thread pool. The password is first reduced to the base64 of its SHA-256, so every byte of a
/// long passphrase counts (bcrypt alone reads only the first 72).
struct PasswordHashing: Sendable {
    let cost: Int
    let threadPool: NIOThreadPool
    /// A digest of a random password, verified against when there is no real digest to check.
    private let decoyDigest: String

    init(cost: Int, threadPool: NIOThreadPool) throws {
        self.cost = cost
        self.threadPool = threadPool
        self.decoyDigest = try Bcrypt.hash(SecretToken.generate().value, cost: cost)
    }

    func hash(_ password: String) async throws -> String {
        let input = Self.prepared(password)
        let cost = self.cost
        return try await threadPool.runIfActive { try Bcrypt.hash(input, cost: cost) }
    }

    func verify(_ password: String, against digest: String) async throws -> Bool {
        let input = Self.prepared(password)
        return try await threadPool.runIfActive { (try? Bcrypt.verify(input, created: digest)) ?? false }
    }

    /// Spends the time of a verification without a real digest, so a sign-in with an unknown address takes as
    /// long as one with a wrong password.
    func verifyAgainstNothing(_ password: String) async throws {
        _ = try await verify(password, against: decoyDigest)
    }

    private static func prepared(_ password: String) -> String {
        Data(SHA256.hash(data: Data(password.utf8))).base64EncodedString()
    }
}
