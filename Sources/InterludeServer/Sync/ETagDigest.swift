import Crypto
import Foundation

/// An entity tag made of what identifies the state of a representation: each part fed to SHA-256 as bytes (a
/// string with its length first), each item ended by a separator, so different lists never hash alike.
struct ETagDigest {
    private var hasher = SHA256()

    mutating func add(_ parts: any ETagPart...) {
        for part in parts { part.feed(into: &hasher) }
        hasher.update(data: [0x0a])
    }

    /// The tag in HTTP's quoted form.
    var value: String {
        "\"" + Data(hasher.finalize()).base64URLEncoded.prefix(27) + "\""
    }
}

protocol ETagPart {
    func feed(into hasher: inout SHA256)
}

extension String: ETagPart {
    func feed(into hasher: inout SHA256) {
        utf8.count.feed(into: &hasher)
        hasher.update(data: Data(utf8))
    }
}

extension UUID: ETagPart {
    func feed(into hasher: inout SHA256) {
        withUnsafeBytes(of: uuid) { hasher.update(bufferPointer: $0) }
    }
}

extension Int: ETagPart {
    func feed(into hasher: inout SHA256) {
        withUnsafeBytes(of: littleEndian) { hasher.update(bufferPointer: $0) }
    }
}

extension Double: ETagPart {
    func feed(into hasher: inout SHA256) {
        withUnsafeBytes(of: bitPattern.littleEndian) { hasher.update(bufferPointer: $0) }
    }
}
