/// Where a `next=` parameter may send the browser: a path on this site, as the browser will read it.
///
/// Browsers drop ASCII tab, line feed and carriage return anywhere in a URL, strip leading and trailing spaces and
/// control characters, and read `\` as `/`; `/\t/evil.example` becomes `//evil.example`, another site. So the
/// candidate is normalised the same way first, and accepted only when it is then a path of this origin.
public enum LocalPath {
    /// The normalised path, or nil when the browser would leave this site (or the value is no path at all).
    public static func safe(_ candidate: String?) -> String? {
        guard let candidate else { return nil }
        let removed = candidate.unicodeScalars.filter { $0 != "\t" && $0 != "\n" && $0 != "\r" }
        var scalars = Substring.UnicodeScalarView(removed)
        while let first = scalars.first, first.value <= 0x20 { scalars.removeFirst() }
        while let last = scalars.last, last.value <= 0x20 { scalars.removeLast() }
        let path = String(scalars)
        guard path.hasPrefix("/"), !path.hasPrefix("//"), !path.contains("\\"),
            !path.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F })
        else { return nil }
        return path
    }
}
