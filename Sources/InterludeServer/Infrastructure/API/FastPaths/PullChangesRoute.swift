import Foundation
import HTTPTypes
@_spi(Generated) import OpenAPIRuntime

/// `GET /api/v1/sync`, answered as the generated operation answers it — the same input read by the same converter, the
/// same handler, the same statuses and headers — except that the changes are written by `DirectJSONEncoder`. A full
/// picture is the largest answer phones ask for often, and Foundation's encoder was a third of its cost. Should the
/// direct encoder refuse a value, it is written by the generated path's encoder instead.
struct PullChangesRoute: Sendable {
    let server: OwnOperationServer

    var path: String {
        get throws { try server.route("/sync") }
    }

    /// The operation, as the transport runs it in place of the generated one.
    func answer(_ request: HTTPRequest, _ body: HTTPBody?, _ metadata: ServerRequestMetadata) async throws
        -> (HTTPResponse, HTTPBody?)
    {
        let converter = server.generated.converter
        let encoder = server.encoder
        return try await server.generated.handle(
            request: request, requestBody: body, metadata: metadata, forOperation: Operations.PullChanges.id,
            using: { APIHandler.pullChanges($0) },
            deserializer: { request, _, _ in
                Operations.PullChanges.Input(
                    query: .init(
                        since: try converter.getOptionalQueryItemAsURI(
                            in: request.soar_query, style: .form, explode: true, name: "since", as: String.self)),
                    headers: .init(
                        ifNoneMatch: try converter.getOptionalHeaderFieldAsURI(
                            in: request.headerFields, name: "If-None-Match", as: String.self),
                        accept: try converter.extractAcceptHeaderIfPresent(in: request.headerFields)))
            },
            serializer: { output, request in
                switch output {
                case .ok(let value):
                    var response = HTTPResponse(soar_statusCode: 200)
                    try converter.setHeaderFieldAsURI(
                        in: &response.headerFields, name: "ETag", value: value.headers.eTag)
                    switch value.body {
                    case .json(let changes):
                        return try converter.directJSONAnswer(response, changes, for: request) {
                            try encoder.encode($0)
                        }
                    }
                case .notModified:
                    return (HTTPResponse(soar_statusCode: 304), nil)
                case .default(let statusCode, let value):
                    return try converter.problemAnswer(statusCode, value, for: request)
                }
            })
    }
}
