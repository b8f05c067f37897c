import InterludeCore

typealias LanguageTexts = Components.Schemas.LanguageTexts

extension Components.Schemas.LanguageTexts {
    init(_ text: LocalizedText) {
        self.init(en: text.values[.en], de: text.values[.de])
    }

    /// A text sent plainly (in the fallback language), per language, or both: a language given in `texts` wins.
    static func merged(_ plain: String?, _ texts: Self?) -> [Language: String?] {
        var values: [Language: String?] = [.fallback: plain]
        if let en = texts?.en { values[.en] = en }
        if let de = texts?.de { values[.de] = de }
        return values
    }
}
