import Foundation

/// Texts that order lists: compared as text, they order as the values they stand for.
public enum SortKey {
    /// Milliseconds since the year 1, zero-padded so that text order is time order.
    public static func moment(_ moment: Date) -> String {
        let milliseconds = max(Int64((moment.timeIntervalSince1970 * 1000).rounded()) + 62_135_596_800_000, 0)
        let digits = String(milliseconds)
        return String(repeating: "0", count: max(0, 17 - digits.count)) + digits
    }

    /// A whole number from 0 up, zero-padded so that text order is number order.
    public static func number(_ value: Int) -> String {
        let digits = String(max(value, 0))
        return String(repeating: "0", count: max(0, 19 - digits.count)) + digits
    }

    /// Case, accents, width and spacing set aside.
    public static func words(_ text: String) -> String {
        text.precomposedStringWithCompatibilityMapping
            .folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil)
            .split(whereSeparator: { $0.isWhitespace }).joined(separator: " ")
    }

    /// A fixed-width key of digits turned around: what came first comes last, so that one part of a key made of
    /// several may run the other way.
    public static func reversed(_ key: String) -> String {
        String(
            key.map { character in
                guard let digit = character.wholeNumberValue else { return character }
                return Character(String(9 - digit))
            })
    }
}
