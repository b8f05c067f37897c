import Foundation

/// What changed between two versions of a text, line by line, for a person asked to agree to the new one.
public enum LineDiff {
    public enum Kind: String, Sendable, Codable {
        case same
        case added
        case removed
    }

    public struct Line: Sendable, Equatable {
        public let kind: Kind
        public let text: String

        public init(_ kind: Kind, _ text: String) {
            self.kind = kind
            self.text = text
        }
    }

    /// Beyond this many lines on either side the texts are shown as wholly replaced rather than compared.
    public static let maxLines = 2000

    /// The lines of `new` in order, with the lines of `old` it dropped placed where they stood.
    public static func lines(from old: String, to new: String) -> [Line] {
        let before = split(old)
        let after = split(new)
        guard before.count <= maxLines, after.count <= maxLines else {
            return before.map { Line(.removed, $0) } + after.map { Line(.added, $0) }
        }
        // Longest common subsequence, filled from the end so the walk below runs forwards.
        let width = after.count + 1
        var common = [Int](repeating: 0, count: (before.count + 1) * width)
        for i in stride(from: before.count - 1, through: 0, by: -1) {
            for j in stride(from: after.count - 1, through: 0, by: -1) {
                common[i * width + j] =
                    before[i] == after[j]
                    ? common[(i + 1) * width + j + 1] + 1
                    : max(common[(i + 1) * width + j], common[i * width + j + 1])
            }
        }
        var result: [Line] = []
        var i = 0
        var j = 0
        while i < before.count, j < after.count {
            if before[i] == after[j] {
                result.append(Line(.same, after[j]))
                i += 1
                j += 1
            } else if common[(i + 1) * width + j] >= common[i * width + j + 1] {
                result.append(Line(.removed, before[i]))
                i += 1
            } else {
                result.append(Line(.added, after[j]))
                j += 1
            }
        }
        result += before[i...].map { Line(.removed, $0) }
        result += after[j...].map { Line(.added, $0) }
        return result
    }

    private static func split(_ text: String) -> [String] {
        text.isEmpty ? [] : text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    }
}
