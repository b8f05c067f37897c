import Foundation
import HTTPTypes
@_spi(Generated) import OpenAPIRuntime

/// `POST /api/v1/me/responses`, answered as the generated operation answers it — the same converter, the same
/// handler, the same statuses, checks and problems — except for two steps every completed questionnaire takes. The
/// body is read by `SubmissionScanner` when it has the shape apps send, and otherwise by the generated reader; the
/// result is written by `DirectJSONEncoder`.
struct SubmitResponseRoute: Sendable {
    let server: OwnOperationServer

    var path: String {
        get throws { try server.route("/me/responses") }
    }

    /// The operation, as the transport runs it in place of the generated one.
    func answer(_ request: HTTPRequest, _ body: HTTPBody?, _ metadata: ServerRequestMetadata) async throws
        -> (HTTPResponse, HTTPBody?)
    {
        let converter = server.generated.converter
        let encoder = server.encoder
        return try await server.generated.handle(
            request: request, requestBody: body, metadata: metadata, forOperation: Operations.SubmitResponse.id,
            using: { APIHandler.submitResponse($0) },
            deserializer: { request, body, _ in
                let headers = Operations.SubmitResponse.Input.Headers(
                    accept: try converter.extractAcceptHeaderIfPresent(in: request.headerFields))
                _ = try converter.bestContentType(
                    received: converter.extractContentTypeIfPresent(in: request.headerFields),
                    options: ["application/json"])
                let data: Data? = if let body { try await Data(collecting: body, upTo: .max) } else { nil }
                if let data, let submission = SubmissionScanner.read(data) {
                    return Operations.SubmitResponse.Input(headers: headers, body: .json(submission))
                }
                return Operations.SubmitResponse.Input(
                    headers: headers,
                    body: try await converter.getRequiredRequestBodyAsJSON(
                        Components.Schemas.ResponseSubmission.self, from: data.map { HTTPBody($0) },
                        transforming: { .json($0) }))
            },
            serializer: { output, request in
                switch output {
                case .ok(let value):
                    switch value.body {
                    case .json(let result):
                        return try converter.directJSONAnswer(HTTPResponse(soar_statusCode: 200), result, for: request)
                        {
                            try encoder.encode($0)
                        }
                    }
                case .created(let value):
                    switch value.body {
                    case .json(let result):
                        return try converter.directJSONAnswer(HTTPResponse(soar_statusCode: 201), result, for: request)
                        {
                            try encoder.encode($0)
                        }
                    }
                case .default(let statusCode, let value):
                    return try converter.problemAnswer(statusCode, value, for: request)
                }
            })
    }
}
