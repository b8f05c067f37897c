import HTTPTypes
@_spi(Generated) import OpenAPIRuntime

/// What this server's own operations (`PullChangesRoute`, `SubmitResponseRoute`) answer through: the generated
/// server, for its converter and its handling of errors, and the encoder that writes their answers.
struct OwnOperationServer: Sendable {
    let generated: UniversalServer<APIHandler>
    let encoder: DirectJSONEncoder

    init(configuration: Configuration) throws {
        generated = UniversalServer(
            serverURL: try Servers.Server1.url(), handler: APIHandler(), configuration: configuration)
        encoder = DirectJSONEncoder(dates: configuration.dateTranscoder)
    }

    /// The route of the operation at `path` in the contract.
    func route(_ path: String) throws -> String {
        try generated.apiPathComponentsWithServerPrefix(path)
    }
}

/// The answers this server's own operations (`PullChangesRoute`, `SubmitResponseRoute`) write as the generated
/// serialisers write them: the same checks of the request's `Accept`, the same content types and headers.
extension Converter {
    /// A JSON answer whose body `write` writes with `DirectJSONEncoder`; a value that encoder refuses is written by
    /// the generated path's encoder instead.
    func directJSONAnswer<T: Encodable>(
        _ response: HTTPResponse, _ value: T, for request: HTTPRequest, write: (T) throws -> [UInt8]
    ) throws -> (HTTPResponse, HTTPBody?) {
        try validateAcceptIfPresent("application/json", in: request.headerFields)
        var response = response
        let contentType = "application/json; charset=utf-8"
        do {
            let bytes = try write(value)
            response.headerFields[.contentType] = contentType
            return (response, HTTPBody(bytes))
        } catch is DirectJSONEncoder.OutOfOrder {
            return (
                response,
                try setResponseBodyAsJSON(value, headerFields: &response.headerFields, contentType: contentType)
            )
        }
    }

    /// A problem answer, as every operation's `default` answer is written.
    func problemAnswer(_ statusCode: Int, _ value: Components.Responses.Problem, for request: HTTPRequest) throws
        -> (HTTPResponse, HTTPBody?)
    {
        var response = HTTPResponse(soar_statusCode: statusCode)
        try setHeaderFieldAsURI(in: &response.headerFields, name: "Retry-After", value: value.headers.retryAfter)
        switch value.body {
        case .applicationProblemJson(let problem):
            try validateAcceptIfPresent("application/problem+json", in: request.headerFields)
            return (
                response,
                try setResponseBodyAsJSON(
                    problem, headerFields: &response.headerFields,
                    contentType: "application/problem+json; charset=utf-8")
            )
        }
    }
}
