import Foundation

/// Comma-separated values as RFC 4180 defines them, read (REDCap data dictionaries) and written (exports). A row
/// ends with CRLF; a field is quoted (its quotes doubled) when it holds a comma, a quote, a line break or space at
/// either end; an absent value is an empty field. Numbers are written with a dot, whatever the locale.
public enum CSV {
    public static func row(_ fields: [String?]) -> String {
        fields.map { $0.map(field) ?? "" }.joined(separator: ",") + "\r\n"
    }

    public static func field(_ value: String) -> String {
        // Scalars, not characters: CRLF is one character, equal to neither CR nor LF.
        let needsQuotes =
            value.unicodeScalars.contains { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }
            || value.first?.isWhitespace == true || value.last?.isWhitespace == true
        guard needsQuotes else { return value }
        return "\"" + value.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// A number as analysts' tools read it: no grouping, a dot, no trailing zeros, integers without a fraction.
    public static func number(_ value: Double) -> String {
        value.dataText
    }

    public static func parse(_ text: String) -> [[String]] {
        var rows: [[String]] = []
        var row: [String] = []
        var field = ""
        var quoted = false
        var characters = text.hasPrefix("\u{FEFF}") ? Substring(text.dropFirst()) : Substring(text)
        while let character = characters.popFirst() {
            if quoted {
                if character == "\"" {
                    if characters.first == "\"" {
                        field.append("\"")
                        characters.removeFirst()
                    } else {
                        quoted = false
                    }
                } else {
                    field.append(character)
                }
                continue
            }
            switch character {
            case "\"": quoted = true
            case ",":
                row.append(field)
                field = ""
            case "\n", "\r\n", "\r":
                row.append(field)
                rows.append(row)
                row = []
                field = ""
            default: field.append(character)
            }
        }
        if !field.isEmpty || !row.isEmpty {
            row.append(field)
            rows.append(row)
        }
        return rows
    }
}
