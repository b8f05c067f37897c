import Foundation

/// Whether a text field holds one line (a name, a title) or running text (a comment, a message, a consent text).
public enum TextLines: Sendable {
    /// No control character at all, newline and tab included.
    case single
    /// Newline, carriage return and tab are allowed; every other control character is not.
    case multiple
}

extension String {
    /// True when the text holds a control character (Unicode category Cc: U+0000–U+001F, U+007F–U+009F) that this
    /// kind of field does not allow. No person types these; they forge log lines, split headers and hide text. A
    /// one-line field also refuses the bidirectional embeddings, overrides and isolates (U+202A–U+202E,
    /// U+2066–U+2069): in a name or a title they turn what a reader sees around ("cod.exe" shown as "exe.doc").
    public func hasControlCharacters(allowing lines: TextLines) -> Bool {
        unicodeScalars.contains { scalar in
            if lines == .single, Self.bidiControls.contains(scalar.value) { return true }
            guard scalar.properties.generalCategory == .control else { return false }
            if lines == .multiple, scalar == "\n" || scalar == "\r" || scalar == "\t" { return false }
            return true
        }
    }

    private static let bidiControls: Set<UInt32> = [
        0x202A, 0x202B, 0x202C, 0x202D, 0x202E, 0x2066, 0x2067, 0x2068, 0x2069,
    ]
}

/// Finds control characters anywhere in a JSON document, for the door every request body passes through: no
/// field of any API takes one, so the first found is refused before any handler sees the body.
public enum JSONTextScan {
    /// The place (`sections.0.items.2.text.en`) of the first string or key holding a control character other than
    /// newline, carriage return and tab; nil when there is none or the data is not JSON.
    public static func controlCharacterPath(in data: Data) -> String? {
        guard mayHoldControlCharacters(data),
            let document = try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
        else { return nil }
        return path(in: document, at: [])
    }

    /// A cheap pass over the bytes: a control character reaches a JSON string only as a `\u` escape, as DEL or as
    /// a C1 character (UTF-8 `C2 80`–`C2 9F`).
    private static func mayHoldControlCharacters(_ data: Data) -> Bool {
        data.withUnsafeBytes(mayHoldControlCharacters)
    }

    private static func mayHoldControlCharacters(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var previous: UInt8 = 0
        for byte in bytes {
            if byte == 0x7F || (previous == 0xC2 && (0x80...0x9F).contains(byte)) || (previous == 0x5C && byte == 0x75)
            {
                return true
            }
            previous = previous == 0x5C && byte == 0x5C ? 0 : byte
        }
        return false
    }

    private static func path(in value: Any, at place: [String]) -> String? {
        switch value {
        case let text as String:
            return text.hasControlCharacters(allowing: .multiple) ? joined(place) : nil
        case let object as [String: Any]:
            for key in object.keys.sorted() {
                if key.hasControlCharacters(allowing: .single) { return joined(place + ["key"]) }
                if let found = path(in: object[key] as Any, at: place + [key]) { return found }
            }
            return nil
        case let array as [Any]:
            for (index, element) in array.enumerated() {
                if let found = path(in: element, at: place + [String(index)]) { return found }
            }
            return nil
        default:
            return nil
        }
    }

    private static func joined(_ place: [String]) -> String {
        place.isEmpty ? "body" : place.joined(separator: ".")
    }
}
