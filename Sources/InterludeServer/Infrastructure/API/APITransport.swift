import HTTPTypes
import OpenAPIRuntime
import OpenAPIVapor

/// The generated server's operations on Vapor, with the few this server answers by a route of its own (see
/// `PullChangesRoute`) put in their place: same path, same middleware, same contract.
final class APITransport: ServerTransport {
    typealias Handler = @Sendable (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> (HTTPResponse, HTTPBody?)

    struct UnusedReplacement: Error, CustomStringConvertible {
        let route: String
        var description: String { "no generated operation at \(route) to answer by its own route" }
    }

    private let vapor: VaporTransport
    private var replacements: [String: Handler]

    init(_ vapor: VaporTransport, replacing replacements: [(HTTPRequest.Method, String, Handler)]) {
        self.vapor = vapor
        self.replacements = Dictionary(
            replacements.map { ("\($0.0.rawValue) \($0.1)", $0.2) }, uniquingKeysWith: { first, _ in first })
    }

    func register(_ handler: @escaping Handler, method: HTTPRequest.Method, path: String) throws {
        try vapor.register(replacements.removeValue(forKey: "\(method.rawValue) \(path)") ?? handler, method: method, path: path)
    }

    /// Throws when a replacement found no operation to replace: the contract's path or method changed.
    func checkAllReplaced() throws {
        if let route = replacements.keys.sorted().first { throw UnusedReplacement(route: route) }
    }
}
