import Crypto
import Foundation

#if canImport(Security)
    import Security
#endif

/// Where the store's key lives. On Apple platforms the keychain (`KeychainKeyStore`); elsewhere a file readable by
/// the user alone (`FileKeyStore`).
public protocol KeyStore: Sendable {
    /// The key, made and kept on first use.
    func key() throws -> SymmetricKey
}

/// A 256-bit key in a file of its own, created with permissions for its owner only.
public struct FileKeyStore: KeyStore {
    public let url: URL

    public init(url: URL) {
        self.url = url
    }

    public func key() throws -> SymmetricKey {
        if let data = try? Data(contentsOf: url), data.count == 32 { return SymmetricKey(data: data) }
        let key = SymmetricKey(size: .bits256)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        let bytes = key.withUnsafeBytes { Data($0) }
        guard FileManager.default.createFile(atPath: url.path, contents: bytes, attributes: [.posixPermissions: 0o600])
        else {
            throw CocoaError(.fileWriteNoPermission, userInfo: [NSFilePathErrorKey: url.path])
        }
        return key
    }
}

#if canImport(Security)
    /// A 256-bit key in the keychain, available after the first unlock and never leaving this device.
    public struct KeychainKeyStore: KeyStore {
        public let service: String
        public let account: String

        public init(service: String = "org.interlude.store", account: String = "store-key") {
            self.service = service
            self.account = account
        }

        public func key() throws -> SymmetricKey {
            let query: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service,
                kSecAttrAccount as String: account,
            ]
            var found: AnyObject?
            if SecItemCopyMatching(query.merging([kSecReturnData as String: true]) { $1 } as CFDictionary, &found)
                == errSecSuccess,
                let data = found as? Data, data.count == 32
            {
                return SymmetricKey(data: data)
            }
            let key = SymmetricKey(size: .bits256)
            var item = query
            item[kSecValueData as String] = key.withUnsafeBytes { Data($0) }
            item[kSecAttrAccessible as String] = kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly
            let status = SecItemAdd(item as CFDictionary, nil)
            guard status == errSecSuccess else { throw NSError(domain: NSOSStatusErrorDomain, code: Int(status)) }
            return key
        }
    }
#endif

/// Seals what a person wrote (answers, notes, appointments, records) with AES-GCM before it reaches the disk.
struct TextSealer: Sendable {
    let key: SymmetricKey

    func seal(_ plaintext: Data) throws -> Data {
        guard let combined = try AES.GCM.seal(plaintext, using: key).combined else {
            throw CryptoKitError.incorrectParameterSize
        }
        return combined
    }

    func open(_ sealed: Data) throws -> Data {
        try AES.GCM.open(AES.GCM.SealedBox(combined: sealed), using: key)
    }

    func seal(_ value: some Encodable) throws -> Data {
        try seal(JSONEncoder().encode(value))
    }

    func open<Value: Decodable>(_ sealed: Data, as type: Value.Type) throws -> Value {
        try JSONDecoder().decode(type, from: open(sealed))
    }
}
