import Foundation

/// Which address a request came from when it passed through reverse proxies. Each proxy appends the address it
/// was reached from to `X-Forwarded-For`, so only the entries the trusted proxies wrote can be believed: the
/// client is the right-most entry no trusted proxy stands behind. Anything to its left was written by the
/// client itself and may be forged.
public enum ForwardedFor {
    /// The client's address, given every `X-Forwarded-For` header in order, the socket peer, and how many proxies
    /// in front of the server are trusted (0: the header is ignored).
    public static func client(headers: [String], peer: String?, trustedProxies: Int) -> String {
        let fallback = peer ?? "unknown"
        guard trustedProxies > 0 else { return fallback }
        let entries = headers.flatMap { $0.split(separator: ",") }
            .map { $0.trimmingCharacters(in: .whitespaces) }
        guard !entries.isEmpty else { return fallback }
        let index = max(0, entries.count - trustedProxies)
        let entry = entries[index]
        return entry.isEmpty || entry.count > 64 ? fallback : entry
    }
}
