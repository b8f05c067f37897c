import Foundation

extension String {
    /// The text cut to at most `length` characters at a word, with "…" where it was cut.
    public func shortened(to length: Int) -> String {
        guard count > length else { return self }
        let cut = prefix(length)
        return (cut.lastIndex(of: " ").map { String(cut[..<$0]) } ?? String(cut)) + "…"
    }

    /// The first line that holds anything, trimmed and shortened to `length`: what a list shows of a message.
    public func firstLine(shortenedTo length: Int) -> String {
        let line =
            split(whereSeparator: \.isNewline)
            .lazy.map { $0.trimmingCharacters(in: .whitespaces) }
            .first { !$0.isEmpty } ?? ""
        return line.shortened(to: length)
    }
}
