import Foundation
import HTTPTypes
@_spi(Generated) import OpenAPIRuntime

/// `POST /api/v1/me/responses`, answered as the generated operation answers it — the same converter, the same
/// handler, the same statuses, checks and problems — except for two steps every completed questionnaire takes. The
/// body is read by `SubmissionScanner` when it has the shape apps send, and otherwise by `SubmissionReader`, which
/// reads answers text first: the generated reader tries each answer as a boolean, a whole number and a number
/// before a text, and each failed try builds and throws an error, which made reading the answers a twentieth of a
/// submission's CPU, though most answers are option codes. The result is written by `DirectJSONEncoder`.
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
                        SubmissionReader.self, from: data.map { HTTPBody($0) }, transforming: { .json($0.submission) }))
            },
            serializer: { output, request in
                switch output {
                case .ok(let value):
                    switch value.body {
                    case .json(let result):
                        return try converter.directJSONAnswer(HTTPResponse(soar_statusCode: 200), result, for: request) {
                            try encoder.encode($0)
                        }
                    }
                case .created(let value):
                    switch value.body {
                    case .json(let result):
                        return try converter.directJSONAnswer(HTTPResponse(soar_statusCode: 201), result, for: request) {
                            try encoder.encode($0)
                        }
                    }
                case .default(let statusCode, let value):
                    return try converter.problemAnswer(statusCode, value, for: request)
                }
            })
    }
}

/// Reads a `ResponseSubmission` as its generated `Decodable` conformance does — the same keys in the same order, the
/// same errors — with each answer tried as a text first.
struct SubmissionReader: Decodable {
    let submission: Components.Schemas.ResponseSubmission

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Components.Schemas.ResponseSubmission.CodingKeys.self)
        submission = .init(
            id: try container.decode(String.self, forKey: .id),
            promptId: try container.decode(String.self, forKey: .promptId),
            instrumentKey: try container.decode(String.self, forKey: .instrumentKey),
            version: try container.decode(Int.self, forKey: .version),
            answers: try container.decode(Answers.self, forKey: .answers).container,
            startedAt: try container.decodeIfPresent(Date.self, forKey: .startedAt),
            completedAt: try container.decode(Date.self, forKey: .completedAt),
            context: try container.decodeIfPresent(Components.Schemas.AnswerContext.self, forKey: .context))
    }

    private struct Answers: Decodable {
        let container: OpenAPIObjectContainer

        init(from decoder: any Decoder) throws {
            let object = try decoder.container(keyedBy: ItemID.self)
            var values: [String: (any Sendable)?] = [:]
            values.reserveCapacity(object.allKeys.count)
            for key in object.allKeys {
                values[key.stringValue] = try object.decode(Answer.self, forKey: key).value
            }
            container = try OpenAPIObjectContainer(unvalidatedValue: values)
        }
    }

    /// One answer: a text, or whatever else `OpenAPIValueContainer` reads.
    private struct Answer: Decodable {
        let value: (any Sendable)?

        init(from decoder: any Decoder) throws {
            if let text = try? decoder.singleValueContainer().decode(String.self) {
                value = text
            } else {
                value = try OpenAPIValueContainer(from: decoder).value
            }
        }
    }

    private struct ItemID: CodingKey {
        let stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }
}
