import Foundation

/// A text in every language it was written in; encoded as `{"en": "…", "de": "…"}`.
public struct LocalizedText: Codable, Hashable, Sendable, ExpressibleByStringLiteral {
    public var values: [Language: String]

    public init(_ values: [Language: String]) {
        self.values = values
    }

    public init(en: String, de: String? = nil) {
        var values: [Language: String] = [.en: en]
        if let de { values[.de] = de }
        self.values = values
    }

    public init(stringLiteral value: String) {
        values = [.en: value]
    }

    /// The text in `language`, else in English, else in any language it has.
    public func text(_ language: Language) -> String {
        values[language] ?? values[.fallback] ?? values.values.sorted().first ?? ""
    }

    /// Several texts as one, language by language: each language any of them has, every text in it (else in the
    /// language it has) in order.
    public static func joined(_ texts: [LocalizedText], separator: String) -> LocalizedText {
        let languages = Set(texts.flatMap(\.values.keys))
        return LocalizedText(
            Dictionary(
                uniqueKeysWithValues: languages.map { language in
                    (language, texts.map { $0.text(language) }.joined(separator: separator))
                }))
    }

    public var isEmpty: Bool { values.values.allSatisfy { $0.trimmingCharacters(in: .whitespaces).isEmpty } }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let plain = try? container.decode(String.self) {
            values = [.fallback: plain]
            return
        }
        let raw = try container.decode([String: String].self)
        var values: [Language: String] = [:]
        for (code, text) in raw {
            guard let language = Language(rawValue: code) else {
                throw DecodingError.dataCorruptedError(
                    in: container, debugDescription: "Unsupported language '\(code)'; use en or de")
            }
            values[language] = text
        }
        self.values = values
    }

    /// Written key by key rather than as a dictionary built for the purpose: every instrument definition an app
    /// receives holds hundreds of these.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: LanguageKey.self)
        for language in Language.allCases {
            if let text = values[language] { try container.encode(text, forKey: LanguageKey(language: language)) }
        }
    }

    private struct LanguageKey: CodingKey {
        let language: Language

        init(language: Language) {
            self.language = language
        }

        init?(stringValue: String) {
            guard let language = Language(rawValue: stringValue) else { return nil }
            self.language = language
        }

        init?(intValue: Int) { nil }

        var stringValue: String { language.rawValue }
        var intValue: Int? { nil }
    }
}
