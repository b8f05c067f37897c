/// An IP address as the resolver reads a host: every IPv4 form `inet_aton` takes (`127.1`, `0177.0.0.1`,
/// `0x7f.0.0.1`, `2130706433`) and every IPv6 form, including IPv4 written in its last 32 bits.
public enum NetworkAddress: Sendable, Hashable {
    case v4(UInt32)
    case v6([UInt8])

    /// The address a URL host names, or `nil` when the host is a name. A trailing dot is ignored, brackets around
    /// IPv6 are accepted. A host whose last label is numeric but that is no valid IPv4 address is `invalid`.
    public enum Parsed: Sendable, Equatable {
        case address(NetworkAddress)
        case name(String)
        case invalid
    }

    public static func parse(host: String) -> Parsed {
        var text = host.lowercased()
        if text.hasPrefix("[") && text.hasSuffix("]") {
            text = String(text.dropFirst().dropLast())
            return ipv6(text).map { .address(.v6($0)) } ?? .invalid
        }
        if text.contains(":") { return ipv6(text).map { .address(.v6($0)) } ?? .invalid }
        if text.hasSuffix(".") { text.removeLast() }
        guard !text.isEmpty, !text.hasSuffix(".") else { return .invalid }
        let labels = text.split(separator: ".", omittingEmptySubsequences: false)
        guard let last = labels.last, isNumeric(last) else { return .name(text) }
        return ipv4(text).map { .address(.v4($0)) } ?? .invalid
    }

    /// Whether a host on the internet may be behind this address: not private, loopback, link-local, carrier-grade
    /// NAT, benchmarking, documentation, multicast, reserved or unspecified; IPv6 forms that carry an IPv4
    /// address are judged by that address.
    public var isPublic: Bool {
        switch self {
        case .v4(let value): return Self.isPublicIPv4(value)
        case .v6(let bytes):
            if let embedded = embeddedIPv4 { return Self.isPublicIPv4(embedded) }
            if bytes.allSatisfy({ $0 == 0 }) { return false }
            switch (bytes[0], bytes[1]) {
            case (0xfc...0xfd, _): return false  // unique local
            case (0xfe, 0x80...0xff): return false  // link-local and the old site-local
            case (0xff, _): return false  // multicast
            case (0x20, 0x01) where bytes[2] == 0x0d && bytes[3] == 0xb8: return false  // documentation
            case (0x00, _): return false  // reserved, loopback, IPv4-compatible
            default: return true
            }
        }
    }

    public var isLoopback: Bool {
        switch self {
        case .v4(let value): return value >> 24 == 127
        case .v6(let bytes):
            if let embedded = embeddedIPv4, bytes[10] == 0xff { return embedded >> 24 == 127 }
            return bytes.dropLast().allSatisfy { $0 == 0 } && bytes[15] == 1
        }
    }

    /// The IPv4 address inside an IPv4-mapped (`::ffff:0:0/96`), NAT64 (`64:ff9b::/96`) or 6to4 (`2002::/16`)
    /// address.
    var embeddedIPv4: UInt32? {
        guard case .v6(let bytes) = self else { return nil }
        func value(from offset: Int) -> UInt32 {
            bytes[offset..<offset + 4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        }
        if bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xff && bytes[11] == 0xff { return value(from: 12) }
        if bytes[0..<12] == [0x00, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0][...] { return value(from: 12) }
        if bytes[0] == 0x20 && bytes[1] == 0x02 { return value(from: 2) }
        return nil
    }

    private static func isPublicIPv4(_ value: UInt32) -> Bool {
        let blocked: [(UInt32, Int)] = [
            (0x0000_0000, 8), (0x0A00_0000, 8), (0x6440_0000, 10), (0x7F00_0000, 8), (0xA9FE_0000, 16),
            (0xAC10_0000, 12), (0xC000_0000, 24), (0xC000_0200, 24), (0xC0A8_0000, 16), (0xC612_0000, 15),
            (0xC633_6400, 24), (0xCB00_7100, 24), (0xE000_0000, 4), (0xF000_0000, 4),
        ]
        return !blocked.contains { network, length in value >> (32 - length) == network >> (32 - length) }
    }

    private static func isNumeric(_ label: Substring) -> Bool {
        if label.hasPrefix("0x") { return label.dropFirst(2).allSatisfy(\.isHexDigit) }
        return !label.isEmpty && label.allSatisfy { $0.isASCII && $0.isNumber }
    }

    /// The IPv4 forms of `inet_aton`: one to four parts, each decimal, octal (leading 0) or hex (0x); the last part
    /// fills the bytes that remain.
    static func ipv4(_ text: String) -> UInt32? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard (1...4).contains(parts.count) else { return nil }
        var values: [UInt64] = []
        for part in parts {
            guard let value = number(part) else { return nil }
            values.append(value)
        }
        var result: UInt64 = 0
        for (index, value) in values.dropLast().enumerated() {
            guard value <= 255 else { return nil }
            result |= value << (8 * UInt64(3 - index))
        }
        let remainingBits = UInt64(8 * (5 - values.count))
        guard let last = values.last, last < (1 << remainingBits) else { return nil }
        return UInt32(result | last)
    }

    private static func number(_ part: Substring) -> UInt64? {
        guard !part.isEmpty, part.count <= 34 else { return nil }
        if part.hasPrefix("0x") {
            let digits = part.dropFirst(2)
            return digits.isEmpty ? 0 : UInt64(digits, radix: 16)
        }
        if part.count > 1 && part.hasPrefix("0") { return UInt64(part.dropFirst(), radix: 8) }
        return UInt64(part, radix: 10)
    }

    /// The sixteen bytes of an IPv6 address in any of its textual forms, or `nil`. A zone (`%eth0`) is refused.
    static func ipv6(_ text: String) -> [UInt8]? {
        guard !text.contains("%"), text.count <= 45 else { return nil }
        let halves = text.components(separatedBy: "::")
        guard halves.count <= 2 else { return nil }
        func groups(_ part: String) -> [UInt16]? {
            if part.isEmpty { return [] }
            var result: [UInt16] = []
            let pieces = part.split(separator: ":", omittingEmptySubsequences: false)
            for (index, piece) in pieces.enumerated() {
                if index == pieces.count - 1, piece.contains(".") {
                    guard piece.split(separator: ".", omittingEmptySubsequences: false).count == 4,
                        piece.split(separator: ".").allSatisfy({ $0.count <= 3 && $0.allSatisfy(\.isNumber) }),
                        let value = ipv4(String(piece))
                    else { return nil }
                    result += [UInt16(value >> 16), UInt16(value & 0xFFFF)]
                } else {
                    guard (1...4).contains(piece.count), let value = UInt16(piece, radix: 16) else { return nil }
                    result.append(value)
                }
            }
            return result
        }
        guard let head = groups(halves[0]) else { return nil }
        var all = head
        if halves.count == 2 {
            guard let tail = groups(halves[1]), head.count + tail.count <= 7 else { return nil }
            all += Array(repeating: 0, count: 8 - head.count - tail.count) + tail
        }
        guard all.count == 8 else { return nil }
        return all.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }
    }
}
