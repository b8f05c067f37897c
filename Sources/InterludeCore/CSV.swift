import Foundation

/// Comma-separated values as RFC 4180 defines them, read (REDCap data dictionaries) and written (exports). A row
/// ends with CRLF; a field is quoted (its quotes doubled) when it holds a comma, a quote, a line break or space at
/// either end; an absent value is an empty field. Numbers are written with a dot, whatever the locale.
public enum CSV {
    /// One row, every field neutralised and quoted as needed, but those at the `verbatim` places: columns whose own
    /// syntax starts with such a character (REDCap's `@READONLY` action tags, `-1, Never` choices), written by the
    /// server and never by a person.
    public static func row(_ fields: [String?], verbatim: Set<Int> = []) -> String {
        fields.enumerated().map { index, value in
            value.map { field(verbatim.contains(index) ? $0 : neutralised($0)) } ?? ""
        }.joined(separator: ",") + "\r\n"
    }

    /// A cell as a spreadsheet may open it safely. Text starting with `=`, `+`, `-` or `@`, a tab or a carriage
    /// return is read as a formula by Excel, LibreOffice and Google Sheets, so a patient's note could run one on an
    /// analyst's machine: it gets a leading apostrophe, which those programs show as text. Numbers (`-3.5`, `+2`,
    /// `1e-3`) stay as they are.
    public static func neutralised(_ value: String) -> String {
        guard let first = value.unicodeScalars.first, formulaStarts.contains(first), !isNumber(value) else {
            return value
        }
        return "'" + value
    }

    private static let formulaStarts: Set<Unicode.Scalar> = ["=", "+", "-", "@", "\t", "\r"]

    private static func isNumber(_ value: String) -> Bool {
        value.unicodeScalars.allSatisfy {
            ("0"..."9").contains($0) || $0 == "." || $0 == "e" || $0 == "E" || $0 == "+" || $0 == "-"
        }
            && Double(value) != nil
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
