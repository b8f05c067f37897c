import Foundation

/// A syntactically valid, normalised (trimmed, lower-cased) email address.
public struct EmailAddress: Hashable, Sendable, CustomStringConvertible {
    public static let maxLength = 254

    public let value: String

    public var description: String { value }

    /// Normalises and checks an address; nil when it cannot be an address a person receives mail at.
    public init?(_ raw: String) {
        let candidate = raw.trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
        guard candidate.count <= Self.maxLength, Self.isWellFormed(candidate) else { return nil }
        value = candidate
    }

    private static func isWellFormed(_ address: String) -> Bool {
        let parts = address.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2 else { return false }
        let local = parts[0]
        let domain = parts[1]
        guard !local.isEmpty, local.count <= 64, !domain.isEmpty else { return false }
        let forbidden = CharacterSet.whitespacesAndNewlines
            .union(.controlCharacters)
            .union(CharacterSet(charactersIn: "<>()[]\\,;:\"@"))
        guard local.unicodeScalars.allSatisfy({ !forbidden.contains($0) }) else { return false }
        guard !local.hasPrefix("."), !local.hasSuffix("."), !local.contains("..") else { return false }
        let labels = domain.split(separator: ".", omittingEmptySubsequences: false)
        guard labels.count >= 2 else { return false }
        let labelCharacters = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: "-"))
        for label in labels {
            guard !label.isEmpty, label.count <= 63,
                !label.hasPrefix("-"), !label.hasSuffix("-"),
                label.unicodeScalars.allSatisfy({ labelCharacters.contains($0) })
            else { return false }
        }
        return labels.last!.count >= 2
    }
}
