import Foundation

/// Which push addresses the server may call. A subscription names a URL the server will POST to, so without a
/// check anyone could make it call addresses inside the operator's network: only `https` to a public host is
/// accepted, unless loopback endpoints are allowed for tests, and then plain HTTP to loopback too.
public enum PushEndpointPolicy {
    public static func accepts(_ endpoint: String, allowLoopback: Bool) -> Bool {
        guard endpoint.count <= 2048, let url = URL(string: endpoint), let scheme = url.scheme?.lowercased(),
            let host = url.host?.lowercased(), !host.isEmpty, url.user == nil, url.password == nil
        else { return false }
        let bareHost = host.trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        if isLoopback(bareHost) { return allowLoopback && (scheme == "http" || scheme == "https") }
        guard scheme == "https" else { return false }
        if bareHost == "localhost" || bareHost.hasSuffix(".localhost") || bareHost.hasSuffix(".local")
            || bareHost.hasSuffix(".internal") || !bareHost.contains(".") && !bareHost.contains(":")
        {
            return false
        }
        if let octets = ipv4(bareHost) { return isPublic(octets) }
        if bareHost.contains(":") { return isPublicIPv6(bareHost) }
        return true
    }

    static func isLoopback(_ host: String) -> Bool {
        host == "localhost" || host == "::1" || ipv4(host).map { $0[0] == 127 } == true
    }

    static func ipv4(_ host: String) -> [Int]? {
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        let octets = parts.compactMap { Int($0) }.filter { (0...255).contains($0) }
        return octets.count == 4 ? octets : nil
    }

    /// Not private (10/8, 172.16/12, 192.168/16), loopback, link-local, carrier-grade NAT, unspecified or multicast.
    static func isPublic(_ octets: [Int]) -> Bool {
        switch (octets[0], octets[1]) {
        case (0, _), (10, _), (127, _), (169, 254), (192, 168), (224...255, _): return false
        case (172, 16...31), (100, 64...127): return false
        default: return true
        }
    }

    /// Refuses unique-local (fc00::/7), link-local (fe80::/10), unspecified and IPv4-mapped addresses.
    static func isPublicIPv6(_ host: String) -> Bool {
        let lower = host.lowercased()
        if lower == "::" || lower.hasPrefix("::ffff:") { return false }
        if lower.hasPrefix("fc") || lower.hasPrefix("fd") || lower.hasPrefix("fe8") || lower.hasPrefix("fe9")
            || lower.hasPrefix("fea") || lower.hasPrefix("feb") || lower.hasPrefix("ff")
        {
            return false
        }
        return true
    }
}
