import Crypto
import Foundation

/// An entity tag made of what identifies the state of a representation: each part written as bytes (a string with
/// its length first), each item ended by a separator, so different lists never hash alike. The bytes are gathered
/// and fed to SHA-256 once: a full picture has hundreds of small parts, and each update of the hash costs more than
/// its bytes.
struct ETagDigest {
    private var bytes: [UInt8] = []

    /// One item's parts, passed as a pack: a full picture adds hundreds of items, and a variadic list built an array
    /// of boxed parts for each.
    mutating func add<each Part: ETagPart>(_ parts: repeat each Part) {
        for part in repeat each parts { part.write(into: &bytes) }
        bytes.append(0x0a)
    }

    /// The tag in HTTP's quoted form.
    var value: String {
        "\"" + Data(SHA256.hash(data: bytes)).base64URLEncoded.prefix(27) + "\""
    }
}

protocol ETagPart {
    func write(into bytes: inout [UInt8])
}

extension String: ETagPart {
    func write(into bytes: inout [UInt8]) {
        utf8.count.write(into: &bytes)
        bytes.append(contentsOf: utf8)
    }
}

extension UUID: ETagPart {
    func write(into bytes: inout [UInt8]) {
        withUnsafeBytes(of: uuid) { bytes.append(contentsOf: $0) }
    }
}

extension Int: ETagPart {
    func write(into bytes: inout [UInt8]) {
        withUnsafeBytes(of: littleEndian) { bytes.append(contentsOf: $0) }
    }
}

extension Double: ETagPart {
    func write(into bytes: inout [UInt8]) {
        withUnsafeBytes(of: bitPattern.littleEndian) { bytes.append(contentsOf: $0) }
    }
}
