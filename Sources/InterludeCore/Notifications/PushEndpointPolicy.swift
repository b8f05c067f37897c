import Foundation

/// Which push addresses the server may call. A subscription names a URL the server will POST to, so without a
/// check anyone could make it call addresses inside the operator's network: only `https` to a public host is
/// accepted, unless loopback endpoints are allowed for tests, and then plain HTTP to loopback too. The host is
/// read the way the resolver will read it; a name is checked again, against every address it resolves to, when
/// a message is sent (`permits(_:allowLoopback:)`).
public enum PushEndpointPolicy {
    public static func accepts(_ endpoint: String, allowLoopback: Bool) -> Bool {
        guard endpoint.count <= 2048, !endpoint.unicodeScalars.contains(where: { $0.value < 0x21 || $0.value == 0x7F }),
            let url = URL(string: endpoint), let scheme = url.scheme?.lowercased(), let host = url.host, !host.isEmpty,
            url.user == nil, url.password == nil
        else { return false }
        switch NetworkAddress.parse(host: host) {
        case .invalid: return false
        case .address(let address):
            if address.isLoopback { return allowLoopback && (scheme == "http" || scheme == "https") }
            return scheme == "https" && address.isPublic
        case .name(let name):
            if isLoopbackName(name) { return allowLoopback && (scheme == "http" || scheme == "https") }
            return scheme == "https" && isPublicName(name)
        }
    }

    /// Whether a message may go to an address a push host resolved to.
    public static func permits(_ address: NetworkAddress, allowLoopback: Bool) -> Bool {
        address.isPublic || allowLoopback && address.isLoopback
    }

    static func isLoopbackName(_ name: String) -> Bool {
        name == "localhost" || name.hasSuffix(".localhost")
    }

    /// A name with at least two labels, none of the special-use domains that never leave the local network.
    static func isPublicName(_ name: String) -> Bool {
        let labels = name.split(separator: ".", omittingEmptySubsequences: false)
        guard labels.count >= 2, labels.allSatisfy({ !$0.isEmpty && $0.count <= 63 }), name.count <= 253 else {
            return false
        }
        let local: Set<Substring> = [
            "localhost", "local", "internal", "lan", "home", "corp", "intranet", "arpa", "test", "invalid", "onion",
        ]
        return !local.contains(labels[labels.count - 1])
    }
}
