import Foundation
import InterludeCore

/// The texts of the user interface and of emails in every supported language, loaded from
/// `Resources/Locales/<language>.json`; a key missing in one language falls back to English.
package struct Localizer: Sendable {
    private let tables: [Language: [String: String]]
    private var templateTables: [Language: [String: String]] = [:]

    init(tables: [Language: [String: String]]) {
        self.tables = tables
        for language in Language.allCases {
            var table: [String: String] = [:]
            for (key, value) in self.table(prefix: "", language) {
                table[key.replacingOccurrences(of: ".", with: "_")] = value
            }
            templateTables[language] = table
        }
    }

    /// The whole table for templates, keys with dots turned into underscores; made once, as every page needs it.
    func templateTable(_ language: Language) -> [String: String] {
        templateTables[language] ?? [:]
    }

    /// The texts below `directory`, read once per process.
    static func shipped(directory: String) throws -> Localizer {
        try shippedTexts.value(of: directory, load: Localizer.init(directory:))
    }

    private static let shippedTexts = ShippedFiles<Localizer>()

    init(directory: String) throws {
        var tables: [Language: [String: String]] = [:]
        for language in Language.allCases {
            let path = directory + "/" + language.rawValue + ".json"
            let data = try Data(contentsOf: URL(fileURLWithPath: path))
            tables[language] = try JSONDecoder().decode([String: String].self, from: data)
        }
        self.init(tables: tables)
    }

    /// The text for `key`, with `{name}` placeholders replaced by `arguments`.
    func text(_ key: String, _ language: Language, _ arguments: [String: String] = [:]) -> String {
        var text = tables[language]?[key] ?? tables[.fallback]?[key] ?? key
        for (name, value) in arguments {
            text = text.replacingOccurrences(of: "{\(name)}", with: value)
        }
        return text
    }

    /// The text for a count: `<key>.one` for exactly one, `<key>.other` for any other number (English and German
    /// know no more forms), with `{count}` and `arguments` filled in.
    func text(_ key: String, count: Int, _ language: Language, _ arguments: [String: String] = [:]) -> String {
        text(
            "\(key).\(count == 1 ? "one" : "other")", language,
            arguments.merging(["count": String(count)]) { given, _ in given })
    }

    /// A span of minutes in the units people think in: "2 days", "1 day 6 hours", "1 hour 30 minutes"; whole weeks
    /// as weeks.
    func duration(minutes: Int, _ language: Language) -> String {
        let units: [(key: String, minutes: Int)] = [
            ("unit.week", 10_080), ("unit.day", 1_440), ("unit.hour", 60), ("unit.minute", 1),
        ]
        var rest = abs(minutes)
        var parts: [String] = []
        for unit in units where rest >= unit.minutes || (unit.minutes == 1 && parts.isEmpty) {
            let count = rest / unit.minutes
            if unit.key == "unit.week", rest % unit.minutes != 0 { continue }
            parts.append(text(unit.key, count: count, language))
            rest -= count * unit.minutes
            if rest == 0 { break }
        }
        return parts.joined(separator: " ")
    }

    func has(_ key: String) -> Bool {
        tables[.fallback]?[key] != nil
    }

    /// Every key under `prefix`, with the prefix removed, in `language`.
    func table(prefix: String, _ language: Language) -> [String: String] {
        var result: [String: String] = [:]
        for (key, _) in tables[.fallback] ?? [:] where key.hasPrefix(prefix) {
            result[String(key.dropFirst(prefix.count))] = text(key, language)
        }
        return result
    }

    /// What an import did with something it left out of the questions.
    func message(for note: ImportNote, _ language: Language) -> String {
        text("import.note.\(note.kind.rawValue)", language, ["subject": note.subject])
    }

    /// The message for one field problem: a field-specific text when there is one, else the generic one.
    func message(for error: FieldError, _ language: Language) -> String {
        let arguments = ["limit": error.limit.map(String.init) ?? "", "detail": error.detail ?? ""]
        let specific = "field.\(error.field).\(error.code.rawValue)"
        if has(specific) { return text(specific, language, arguments) }
        return text("field.\(error.code.rawValue)", language, arguments)
    }
}
