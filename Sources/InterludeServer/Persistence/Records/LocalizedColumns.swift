import Foundation
import InterludeCore

/// A text kept in two columns: the plain one (English, else the language there is; what lists sort and search by)
/// and its JSON with every language. Rows written before the second column existed have it empty.
extension LocalizedText {
    init(stored json: String, plain: String) {
        if let decoded = try? JSONDecoder().decode(LocalizedText.self, from: Data(json.utf8)), !decoded.values.isEmpty {
            self = decoded
        } else {
            self = plain.isEmpty ? LocalizedText([:]) : LocalizedText([.fallback: plain])
        }
    }

    /// A text that reads the same in every language, such as a person's name.
    package static func neutral(_ text: String) -> LocalizedText {
        LocalizedText(Dictionary(uniqueKeysWithValues: Language.allCases.map { ($0, text) }))
    }

    /// The JSON for the second column.
    var stored: String {
        values.isEmpty ? "" : String(decoding: (try? JSONEncoder().encode(self)) ?? Data(), as: UTF8.self)
    }
}

/// A record whose one text is kept in `text` and `texts` columns.
protocol WrittenInLanguages: AnyObject {
    var text: String { get set }
    var storedTexts: String { get set }
}

extension WrittenInLanguages {
    var texts: LocalizedText {
        get { LocalizedText(stored: storedTexts, plain: text) }
        set {
            text = newValue.text(.fallback)
            storedTexts = newValue.stored
        }
    }
}
