import Foundation

/// A syntactically valid, normalised email address: trimmed, lower-cased, an ASCII local part and the domain in its
/// ASCII (IDNA) form, so two spellings of one mailbox are one address and look-alike letters cannot make a second.
public struct EmailAddress: Hashable, Sendable, CustomStringConvertible {
    public static let maxLength = 254

    public let value: String

    public var description: String { value }

    /// Normalises and checks an address; nil when it cannot be an address a person receives mail at.
    public init?(_ raw: String) {
        let candidate = raw.trimmingCharacters(in: .whitespacesAndNewlines)
            .precomposedStringWithCompatibilityMapping.lowercased()
        let parts = candidate.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, Self.isWellFormed(local: parts[0]), let domain = DomainName.ascii(String(parts[1]))
        else { return nil }
        let address = "\(parts[0])@\(domain)"
        guard address.count <= Self.maxLength else { return nil }
        value = address
    }

    private static func isWellFormed(local: Substring) -> Bool {
        guard !local.isEmpty, local.count <= 64 else { return false }
        let forbidden = CharacterSet.whitespacesAndNewlines
            .union(.controlCharacters)
            .union(CharacterSet(charactersIn: "<>()[]\\,;:\"@"))
        guard local.unicodeScalars.allSatisfy({ $0.isASCII && !forbidden.contains($0) }) else { return false }
        return !local.hasPrefix(".") && !local.hasSuffix(".") && !local.contains("..")
    }
}
