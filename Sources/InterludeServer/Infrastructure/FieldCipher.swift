import Crypto
import Foundation

/// Encrypts what patients write in their own words (answers, notes) before it reaches the database: AES-GCM with
/// a 256-bit key from `INTERLUDE_DATA_KEY` or, without it, from `<data dir>/data.key`, created on first start.
package struct FieldCipher: Sendable {
    private let key: SymmetricKey
    static let prefix = "v1:"

    init(key: SymmetricKey) {
        self.key = key
    }

    /// The key from the setting, else from the key file, which is created (readable by the owner only) if missing.
    static func load(base64Key: String?, dataDirectory: String) throws -> FieldCipher {
        if let base64Key {
            guard let data = Data(base64Encoded: base64Key), data.count == 32 else {
                throw SettingsError.invalid(
                    name: "INTERLUDE_DATA_KEY", value: "(hidden)", expected: "32 random bytes in base64")
            }
            return FieldCipher(key: SymmetricKey(data: data))
        }
        let path = dataDirectory + "/data.key"
        if let stored = FileManager.default.contents(atPath: path) {
            guard
                let data = Data(
                    base64Encoded: String(decoding: stored, as: UTF8.self).trimmingCharacters(
                        in: .whitespacesAndNewlines)),
                data.count == 32
            else {
                throw SettingsError.invalid(name: path, value: "(hidden)", expected: "32 random bytes in base64")
            }
            return FieldCipher(key: SymmetricKey(data: data))
        }
        try FileManager.default.createDirectory(atPath: dataDirectory, withIntermediateDirectories: true)
        let fresh = SymmetricKey(size: .bits256).withUnsafeBytes { Data($0) }
        guard
            FileManager.default.createFile(
                atPath: path, contents: Data(fresh.base64EncodedString().utf8), attributes: [.posixPermissions: 0o600])
        else { throw CocoaError(.fileWriteNoPermission) }
        return FieldCipher(key: SymmetricKey(data: fresh))
    }

    package func seal(_ plaintext: String) throws -> String {
        let box = try AES.GCM.seal(Data(plaintext.utf8), using: key)
        guard let combined = box.combined else { throw CryptoKitError.incorrectParameterSize }
        return Self.prefix + combined.base64EncodedString()
    }

    /// A keyed hash of a text, for finding equal texts among sealed ones without opening them: the same text gives
    /// the same key under the same data key, and nothing of the text can be read from it.
    func matchKey(_ text: String) -> String {
        let derived = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: key, info: Data("interlude match key".utf8), outputByteCount: 32)
        return Data(HMAC<SHA256>.authenticationCode(for: Data(text.utf8), using: derived)).base64EncodedString()
    }

    func open(_ sealed: String) throws -> String {
        guard sealed.hasPrefix(Self.prefix), let data = Data(base64Encoded: String(sealed.dropFirst(Self.prefix.count)))
        else { throw CryptoKitError.incorrectParameterSize }
        let plaintext = try AES.GCM.open(AES.GCM.SealedBox(combined: data), using: key)
        return String(decoding: plaintext, as: UTF8.self)
    }
}
