import HTTPTypes
import OpenAPIRuntime
import Vapor

/// The generated server's operations as Vapor routes, with the few this server answers by an operation of its own (see
/// `PullChangesRoute`) put in their place: same path, same middleware, same contract.
///
/// A body the API's middleware has already read is handed to the operation as it is, and an answer of known size up
/// to `wholeAnswerLimit` goes back as one buffer; only uploads read as they arrive and larger answers (a file, an
/// export) are streamed. Streaming every small answer through a writer of its own cost more than encoding it.
final class APITransport: ServerTransport {
    /// An operation as the generated server hands it over, and as one of this server's own is written.
    typealias Operation =
        @Sendable (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> (HTTPResponse, HTTPBody?)

    /// The largest answer of known size handed over whole; larger ones are streamed.
    static let wholeAnswerLimit = 1 << 20

    struct UnusedReplacement: Error, CustomStringConvertible {
        let route: String
        var description: String { "no generated operation at \(route) to answer by one of this server's own" }
    }

    private let routes: any RoutesBuilder
    private var replacements: [String: Operation]
    private let bounds: RequestBounds
    private let serverPath: String

    struct UnknownOperation: Error, CustomStringConvertible {
        let route: String
        var description: String { "the contract's limits name no operation at \(route)" }
    }

    /// `routes`: where the generated operations are registered, with their middleware; `replacements`: operations
    /// that answer in place of the generated ones at the same method and path; `bounds`: the contract's limits,
    /// checked before each operation, whose paths start with `serverPath`.
    init(
        _ routes: any RoutesBuilder, replacing replacements: [(HTTPRequest.Method, String, Operation)],
        bounds: RequestBounds, serverPath: String
    ) {
        self.routes = routes
        self.replacements = Dictionary(
            replacements.map { ("\($0.0.rawValue) \($0.1)", $0.2) }, uniquingKeysWith: { first, _ in first })
        self.bounds = bounds
        self.serverPath = serverPath
    }

    func register(_ generated: @escaping Operation, method: HTTPRequest.Method, path: String) throws {
        let handler = replacements.removeValue(forKey: "\(method.rawValue) \(path)") ?? generated
        guard path.hasPrefix(serverPath),
            let limits = bounds.operation(method.rawValue, String(path.dropFirst(serverPath.count)))
        else { throw UnknownOperation(route: "\(method.rawValue) \(path)") }
        let bounds = self.bounds
        let components = path.split(separator: "/").map { part in
            part.first == "{" && part.last == "}"
                ? PathComponent.parameter(String(part.dropFirst().dropLast())) : PathComponent.constant(String(part))
        }
        let parameters = components.compactMap { component -> String? in
            if case .parameter(let name) = component { name } else { nil }
        }
        routes.on(HTTPMethod(rawValue: method.rawValue), components, body: .stream) { request in
            try bounds.check(limits, request: request)
            let metadata = ServerRequestMetadata(
                pathParameters: Dictionary(
                    parameters.compactMap { name in request.parameters.get(name).map { (name, Substring($0)) } },
                    uniquingKeysWith: { first, _ in first }))
            let (response, body) = try await handler(
                HTTPRequest(request, method: method), Self.body(of: request), metadata)
            return Response(
                status: .init(statusCode: response.status.code), headers: HTTPHeaders(fields: response.headerFields),
                body: try await Self.answer(body))
        }
    }

    /// Throws when a replacement found no operation to replace: the contract's path or method changed.
    func checkAllReplaced() throws {
        if let route = replacements.keys.sorted().first { throw UnusedReplacement(route: route) }
    }

    /// The request's body: as the middleware read it, or read as it arrives for an upload no middleware reads.
    private static func body(of request: Request) -> HTTPBody? {
        if let read = request.body.data { return HTTPBody(read.readableBytesView) }
        if request.method == .GET || request.method == .HEAD { return nil }
        let length = request.headers.first(name: .contentLength).flatMap(Int64.init)
        return HTTPBody(
            request.body.map(\.readableBytesView), length: length.map { .known($0) } ?? .unknown,
            iterationBehavior: .single)
    }

    /// The answer's body: one buffer when its size is known and small, otherwise written as it is produced.
    private static func answer(_ body: HTTPBody?) async throws -> Response.Body {
        guard let body else { return .empty }
        if case .known(let length) = body.length, length <= wholeAnswerLimit {
            var buffer = ByteBufferAllocator().buffer(capacity: Int(length))
            for try await chunk in body { buffer.writeBytes(chunk) }
            return .init(buffer: buffer)
        }
        let stream: @Sendable (any AsyncBodyStreamWriter) async throws -> Void = { writer in
            for try await chunk in body { try await writer.write(.buffer(ByteBuffer(bytes: chunk))) }
            try await writer.write(.end)
        }
        if case .known(let length) = body.length { return .init(asyncStream: stream, count: Int(clamping: length)) }
        return .init(asyncStream: stream)
    }
}

extension HTTPRequest {
    /// A Vapor request routed to an operation of `method`: its path, query and header fields as the generated server
    /// reads them.
    fileprivate init(_ request: Request, method: Method) {
        var fields = HTTPFields()
        fields.reserveCapacity(request.headers.count)
        for (name, value) in request.headers {
            if let name = HTTPField.Name(name) { fields.append(HTTPField(name: name, value: value)) }
        }
        self.init(
            method: method, scheme: request.url.scheme, authority: request.url.host,
            path: request.url.path + (request.url.query.map { "?" + $0 } ?? ""), headerFields: fields)
    }
}

extension HTTPHeaders {
    /// An answer's header fields as Vapor writes them.
    fileprivate init(fields: HTTPFields) {
        self.init()
        for field in fields { add(name: field.name.rawName, value: field.value) }
    }
}
