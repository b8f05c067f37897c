import AsyncHTTPClient
import Foundation
import InterludeCore
import NIOCore
import NIOPosix
import NIOSSL

#if canImport(Glibc)
    import Glibc
#endif

/// The HTTP clients push messages leave through. The host of every endpoint is resolved when a message is sent,
/// every address it resolves to must be one the policy permits, and the connection goes to the checked address
/// (so a name cannot resolve to a public address for the check and to an inside one for the connection).
/// Redirects are never followed.
package actor PushClients {
    enum Refusal: Error, Equatable, CustomStringConvertible {
        case unresolvable
        case insideAddress

        var description: String {
            switch self {
            case .unresolvable: return "the push host does not resolve"
            case .insideAddress: return "the push host resolves to an address inside the network"
            }
        }
    }

    private let allowLoopback: Bool
    private let tls: TLSConfiguration?
    private let resolve: @Sendable (String) async -> [NetworkAddress]
    /// One client per host and the address it was checked at, newest last; old ones are shut down.
    private var clients: [(key: String, client: HTTPClient)] = []
    private static let kept = 32

    package init(
        allowLoopback: Bool, tls: TLSConfiguration? = nil,
        resolve: @escaping @Sendable (String) async -> [NetworkAddress] = PushClients.systemResolve
    ) {
        self.allowLoopback = allowLoopback
        self.tls = tls
        self.resolve = resolve
    }

    /// The client to send to `host` with, once its addresses are checked.
    func client(for host: String) async throws -> HTTPClient {
        let connectTo: String
        switch NetworkAddress.parse(host: host) {
        case .invalid: throw Refusal.unresolvable
        case .address(let address):
            guard PushEndpointPolicy.permits(address, allowLoopback: allowLoopback) else { throw Refusal.insideAddress }
            connectTo = host
        case .name(let name):
            let addresses = await resolve(name)
            guard let first = addresses.first else { throw Refusal.unresolvable }
            guard addresses.allSatisfy({ PushEndpointPolicy.permits($0, allowLoopback: allowLoopback) }) else {
                throw Refusal.insideAddress
            }
            connectTo = first.text
        }
        let key = host.lowercased() + " " + connectTo
        if let index = clients.firstIndex(where: { $0.key == key }) {
            let kept = clients.remove(at: index)
            clients.append(kept)
            return kept.client
        }
        var configuration = HTTPClient.Configuration(
            redirectConfiguration: .disallow, timeout: .init(connect: .seconds(10)))
        if let tls { configuration.tlsConfiguration = tls }
        if connectTo != host { configuration.dnsOverride = [host.lowercased(): connectTo] }
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        clients.append((key, client))
        if clients.count > Self.kept {
            let oldest = clients.removeFirst().client
            Task { try? await oldest.shutdown() }
        }
        return client
    }

    package func shutdown() async {
        for (_, client) in clients { try? await client.shutdown() }
        clients = []
    }

    /// Every IPv4 and IPv6 address the system resolver gives for `name`, resolved off the event loops.
    @Sendable static func systemResolve(_ name: String) async -> [NetworkAddress] {
        (try? await NIOThreadPool.singleton.runIfActive { lookup(name) }) ?? []
    }

    private static func lookup(_ name: String) -> [NetworkAddress] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(name, nil, &hints, &list) == 0, let first = list else { return [] }
        defer { freeaddrinfo(list) }
        var addresses: [NetworkAddress] = []
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let current = entry {
            if let socketAddress = current.pointee.ai_addr {
                switch Int32(socketAddress.pointee.sa_family) {
                case AF_INET:
                    socketAddress.withMemoryRebound(to: sockaddr_in.self, capacity: 1) {
                        addresses.append(.v4(UInt32(bigEndian: $0.pointee.sin_addr.s_addr)))
                    }
                case AF_INET6:
                    socketAddress.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) {
                        addresses.append(.v6(withUnsafeBytes(of: $0.pointee.sin6_addr) { Array($0) }))
                    }
                default: break
                }
            }
            entry = current.pointee.ai_next
        }
        return addresses
    }
}

extension NetworkAddress {
    /// The address as a connection target: dotted IPv4, or IPv6 in hex groups.
    var text: String {
        switch self {
        case .v4(let value): return (0..<4).map { String(value >> (24 - 8 * $0) & 0xFF) }.joined(separator: ".")
        case .v6(let bytes):
            return stride(from: 0, to: 16, by: 2).map {
                String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16)
            }
            .joined(separator: ":")
        }
    }
}
