import Crypto
import Fluent
import Foundation

/// A random key kept in the database and shared by every server process; it keys the hashes under which
/// rate limits remember clients and addresses, so neither is stored in clear.
actor ServerSecret {
    private static let settingKey = "server.secret"
    private var cached: SymmetricKey?

    func key(on database: any Database, now: Date) async throws -> SymmetricKey {
        if let cached { return cached }
        if let stored = try await SettingRecord.find(Self.settingKey, on: database),
            let data = Data(base64Encoded: stored.value)
        {
            return remember(SymmetricKey(data: data))
        }
        let fresh = SymmetricKey(size: .bits256).withUnsafeBytes { Data($0) }
        do {
            try await SettingRecord(key: Self.settingKey, value: fresh.base64EncodedString(), now: now)
                .create(on: database)
            return remember(SymmetricKey(data: fresh))
        } catch {
            // Another process stored its key first; use that one.
            guard let stored = try await SettingRecord.find(Self.settingKey, on: database),
                let data = Data(base64Encoded: stored.value)
            else { throw error }
            return remember(SymmetricKey(data: data))
        }
    }

    /// A keyed hash of `value`, stable across processes and restarts.
    func digest(_ value: String, on database: any Database, now: Date) async throws -> String {
        Self.digest(value, with: try await key(on: database, now: now))
    }

    /// A keyed hash of `value` under a key fetched before, as lowercase hex.
    static func digest(_ value: String, with key: SymmetricKey) -> String {
        HMAC<SHA256>.authenticationCode(for: Data(value.utf8), using: key).lowercaseHex
    }

    private func remember(_ key: SymmetricKey) -> SymmetricKey {
        cached = key
        return key
    }
}
