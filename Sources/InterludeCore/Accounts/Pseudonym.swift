import Foundation

/// The code under which a patient appears to staff other than their own therapist, e.g. `P-7K3F9Q`.
public enum Pseudonym {
    /// Letters and digits that cannot be mistaken for each other when read aloud or handwritten.
    static let alphabet = Array("23456789ABCDEFGHJKMNPQRSTVWXYZ")
    static let length = 6

    public static func make<G: RandomNumberGenerator>(using generator: inout G) -> String {
        var code = "P-"
        for _ in 0..<length {
            code.append(alphabet.randomElement(using: &generator)!)
        }
        return code
    }

    public static func isWellFormed(_ value: String) -> Bool {
        guard value.hasPrefix("P-"), value.count == length + 2 else { return false }
        return value.dropFirst(2).allSatisfy { alphabet.contains($0) }
    }
}
