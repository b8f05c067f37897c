import Foundation
import HTTPTypes
@_spi(Generated) import OpenAPIRuntime

/// `GET /api/v1/sync`, answered as the generated operation answers it — the same input read by the same converter, the
/// same handler, the same statuses and headers — except that the changes are written by `DirectJSONEncoder`. A full
/// picture is the largest answer phones ask for often, and Foundation's encoder was a third of its cost. Should the
/// direct encoder refuse a value, it is written by the generated path's encoder instead.
struct PullChangesRoute: Sendable {
    let server: UniversalServer<APIHandler>
    let encoder: DirectJSONEncoder

    init(configuration: Configuration) throws {
        server = UniversalServer(serverURL: try Servers.Server1.url(), handler: APIHandler(), configuration: configuration)
        encoder = DirectJSONEncoder(dates: configuration.dateTranscoder)
    }

    var path: String {
        get throws { try server.apiPathComponentsWithServerPrefix("/sync") }
    }

    /// The operation, as the transport runs it in place of the generated one.
    func answer(_ request: HTTPRequest, _ body: HTTPBody?, _ metadata: ServerRequestMetadata) async throws
        -> (HTTPResponse, HTTPBody?)
    {
        let converter = server.converter
        let encoder = encoder
        return try await server.handle(
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
                    try converter.setHeaderFieldAsURI(in: &response.headerFields, name: "ETag", value: value.headers.eTag)
                    switch value.body {
                    case .json(let changes):
                        try converter.validateAcceptIfPresent("application/json", in: request.headerFields)
                        let contentType = "application/json; charset=utf-8"
                        do {
                            let bytes = try encoder.encode(changes)
                            response.headerFields[.contentType] = contentType
                            return (response, HTTPBody(bytes))
                        } catch is DirectJSONEncoder.OutOfOrder {
                            return (
                                response,
                                try converter.setResponseBodyAsJSON(
                                    changes, headerFields: &response.headerFields, contentType: contentType)
                            )
                        }
                    }
                case .notModified:
                    return (HTTPResponse(soar_statusCode: 304), nil)
                case .default(let statusCode, let value):
                    var response = HTTPResponse(soar_statusCode: statusCode)
                    try converter.setHeaderFieldAsURI(
                        in: &response.headerFields, name: "Retry-After", value: value.headers.retryAfter)
                    switch value.body {
                    case .applicationProblemJson(let problem):
                        try converter.validateAcceptIfPresent("application/problem+json", in: request.headerFields)
                        return (
                            response,
                            try converter.setResponseBodyAsJSON(
                                problem, headerFields: &response.headerFields,
                                contentType: "application/problem+json; charset=utf-8")
                        )
                    }
                }
            })
    }
}
