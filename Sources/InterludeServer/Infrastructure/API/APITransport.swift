import HTTPTypes
import OpenAPIRuntime
import OpenAPIVapor
import Vapor

/// The generated server's operations on Vapor, with the few this server answers by a route of its own (see
/// `PullChangesRoute`) put in their place: same path, same middleware, same contract. A route of its own is answered
/// by Vapor directly, without the transport's streaming of the answer through a task of its own.
final class APITransport: ServerTransport {
    typealias Replacement = @Sendable (Request) async throws -> Response

    struct UnusedReplacement: Error, CustomStringConvertible {
        let route: String
        var description: String { "no generated operation at \(route) to answer by its own route" }
    }

    struct ParameterisedReplacement: Error, CustomStringConvertible {
        let route: String
        var description: String { "\(route) has path parameters; a route of its own answers only a fixed path" }
    }

    private let routes: any RoutesBuilder
    private let vapor: VaporTransport
    private var replacements: [String: Replacement]

    /// `routes`: where the generated operations are registered, with their middleware.
    init(_ routes: any RoutesBuilder, replacing replacements: [(HTTPRequest.Method, String, Replacement)]) {
        self.routes = routes
        vapor = VaporTransport(routesBuilder: routes)
        self.replacements = Dictionary(
            replacements.map { ("\($0.0.rawValue) \($0.1)", $0.2) }, uniquingKeysWith: { first, _ in first })
    }

    func register(
        _ handler: @escaping @Sendable (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> (HTTPResponse, HTTPBody?),
        method: HTTPRequest.Method, path: String
    ) throws {
        let route = "\(method.rawValue) \(path)"
        guard let replacement = replacements.removeValue(forKey: route) else {
            return try vapor.register(handler, method: method, path: path)
        }
        guard !path.contains("{") else { throw ParameterisedReplacement(route: route) }
        let components = path.split(separator: "/").map { PathComponent.constant(String($0)) }
        routes.on(HTTPMethod(rawValue: method.rawValue), components, use: replacement)
    }

    /// Throws when a replacement found no operation to replace: the contract's path or method changed.
    func checkAllReplaced() throws {
        if let route = replacements.keys.sorted().first { throw UnusedReplacement(route: route) }
    }
}
