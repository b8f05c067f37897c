import Foundation

/// UUIDs as text, written and read by hand: Foundation does both through the C library's formatted I/O.
public enum UUIDText {
    private static let upperHex = Array("0123456789ABCDEF".utf8)
    private static let lowerHex = Array("0123456789abcdef".utf8)

    /// The text `UUID.uuidString` writes.
    public static func upper(_ id: UUID) -> String {
        written(id, hex: upperHex)
    }

    /// The text `UUID.uuidString.lowercased()` writes, as the API shows ids.
    public static func lower(_ id: UUID) -> String {
        written(id, hex: lowerHex)
    }

    private static func written(_ id: UUID, hex: [UInt8]) -> String {
        let bytes = id.uuid
        return withUnsafeBytes(of: bytes) { raw in
            String(unsafeUninitializedCapacity: 36) { out in
                var position = 0
                for (index, byte) in raw.enumerated() {
                    if index == 4 || index == 6 || index == 8 || index == 10 {
                        out[position] = UInt8(ascii: "-")
                        position += 1
                    }
                    out[position] = hex[Int(byte >> 4)]
                    out[position + 1] = hex[Int(byte & 0x0f)]
                    position += 2
                }
                return position
            }
        }
    }

    /// The UUID `UUID(uuidString:)` reads from `text`, or nil where it would read none.
    public static func parse(_ text: String) -> UUID? {
        var text = text
        return text.withUTF8 { utf8 -> UUID? in
            guard utf8.count == 36 else { return nil }
            var id: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
            let complete = withUnsafeMutableBytes(of: &id) { bytes -> Bool in
                var position = 0
                var index = 0
                while position < 36 {
                    if position == 8 || position == 13 || position == 18 || position == 23 {
                        guard utf8[position] == UInt8(ascii: "-") else { return false }
                        position += 1
                        continue
                    }
                    guard let high = nibble(utf8[position]), let low = nibble(utf8[position + 1]) else { return false }
                    bytes[index] = high << 4 | low
                    index += 1
                    position += 2
                }
                return true
            }
            return complete ? UUID(uuid: id) : nil
        }
    }

    private static func nibble(_ character: UInt8) -> UInt8? {
        switch character {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): character - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): character - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): character - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
