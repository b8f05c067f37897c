import Foundation

/// Regular expressions a text answer must match, as FHIR's `regex` extension gives them. A pattern comes from
/// whoever imports the questionnaire and is matched against what patients type, so only patterns that match in
/// time proportional to the answer are accepted: no quantified group that itself holds a quantifier (`(a+)+`), no
/// back-references, at most `maxLength` characters.
public enum TextPattern {
    public static let maxLength = 200

    /// Why the pattern cannot be used, or nil.
    public static func problem(_ pattern: String) -> FieldError.Code? {
        guard pattern.count <= maxLength else { return .tooLong }
        guard (try? NSRegularExpression(pattern: pattern)) != nil else { return .invalidFormat }
        return isLinear(pattern) ? nil : .tooComplex
    }

    /// Whether `text` matches the whole pattern.
    public static func matches(_ pattern: String, _ text: String) -> Bool {
        guard problem(pattern) == nil, let expression = try? NSRegularExpression(pattern: "^(?:" + pattern + ")$")
        else { return false }
        let range = NSRange(text.startIndex..<text.endIndex, in: text)
        return expression.firstMatch(in: text, range: range) != nil
    }

    /// No group with a quantifier inside is quantified again, and nothing refers back to a group.
    private static func isLinear(_ pattern: String) -> Bool {
        let characters = Array(pattern)
        // Whether each open group holds a quantifier so far.
        var groups: [Bool] = []
        var inClass = false
        var index = 0
        func quantifierFollows(_ position: Int) -> Bool {
            position < characters.count && "*+?{".contains(characters[position])
        }
        while index < characters.count {
            let character = characters[index]
            if character == "\\" {
                if index + 1 < characters.count, characters[index + 1].isNumber, characters[index + 1] != "0" {
                    return false
                }
                if index + 1 < characters.count, characters[index + 1] == "k" { return false }
                index += 2
                if quantifierFollows(index), !groups.isEmpty { groups[groups.count - 1] = true }
                continue
            }
            if inClass {
                if character == "]" {
                    inClass = false
                    if quantifierFollows(index + 1), !groups.isEmpty { groups[groups.count - 1] = true }
                }
                index += 1
                continue
            }
            switch character {
            case "[": inClass = true
            case "(": groups.append(false)
            case ")":
                let heldQuantifier = groups.popLast() ?? false
                if heldQuantifier && quantifierFollows(index + 1) { return false }
                if heldQuantifier || quantifierFollows(index + 1), !groups.isEmpty {
                    groups[groups.count - 1] = true
                }
            case "*", "+", "{":
                if !groups.isEmpty { groups[groups.count - 1] = true }
            default: break
            }
            index += 1
        }
        return true
    }
}
