import Foundation
import InterludeCore
import OpenAPIRuntime
import Vapor

/// An RFC 9457 problem as sent to API clients.
struct ProblemDocument: Codable {
    struct FieldProblem: Codable {
        var field: String
        var code: String
        var detail: String
        var limit: Int?
    }

    var type: String
    var title: String
    var status: Int
    var detail: String
    var errors: [FieldProblem]?

    init(type: String, title: String, status: Int, detail: String, errors: [FieldProblem]?) {
        self.type = type
        self.title = title
        self.status = status
        self.detail = detail
        self.errors = errors
    }

    /// The problem for an application error, in `language`.
    init(_ appError: AppError, language: Language, localizer: Localizer) {
        var fieldProblems: [FieldProblem]?
        if case .validation(let errors) = appError {
            fieldProblems = errors.map {
                .init(
                    field: $0.field, code: $0.code.rawValue, detail: localizer.message(for: $0, language),
                    limit: $0.limit)
            }
        }
        self.init(
            type: "/problems/\(appError.slug)", title: appError.status.reasonPhrase, status: Int(appError.status.code),
            detail: localizer.text("problem.\(appError.slug)", language), errors: fieldProblems)
    }
}

/// Turns every error into the answer a client can act on: problem+json under `/api`, a friendly page elsewhere.
/// Never a stack trace, never a 500 for bad input.
struct ProblemMiddleware: AsyncMiddleware {
    func respond(to request: Request, chainingTo next: any AsyncResponder) async throws -> Response {
        do {
            return try await next.respond(to: request)
        } catch {
            let appError = Self.classify(error, logger: request.logger)
            if request.requestPath.hasPrefix("/api/") || request.requestPath == "/api" {
                return try Self.problemResponse(appError, for: request)
            }
            return try await ErrorPage.render(appError, for: request)
        }
    }

    /// What kind of failure an error is, as a client should see it; `nil` for a server fault.
    static func classify(_ error: any Error, logger: Logger) -> ClassifiedError {
        switch error {
        case let appError as AppError:
            return .app(appError)
        case let failure as ValidationFailure:
            return .app(failure.appError)
        case let serverError as ServerError:
            if let underlying = serverError.underlyingError as? AppError { return .app(underlying) }
            if let failure = serverError.underlyingError as? ValidationFailure { return .app(failure.appError) }
            if let decoding = serverError.underlyingError as? DecodingError { return .app(Self.map(decoding)) }
            let status = Int(serverError.httpStatus.code)
            if (400..<500).contains(status) { return .http(HTTPResponseStatus(statusCode: status)) }
            logger.error("API handler failed: \(String(describing: serverError.underlyingError))")
            return .http(.internalServerError)
        case let decoding as DecodingError:
            return .app(Self.map(decoding))
        case let abort as any AbortError:
            if abort.status.code >= 500 { logger.error("Request failed: \(abort.reason)") }
            return .http(abort.status)
        default:
            logger.error("Request failed: \(String(describing: error))")
            return .http(.internalServerError)
        }
    }

    enum ClassifiedError {
        case app(AppError)
        case http(HTTPResponseStatus)

        var status: HTTPResponseStatus {
            switch self {
            case .app(let error): return error.status
            case .http(let status): return status
            }
        }
    }

    /// Names the field a body could not be decoded at, so the client sees which value is wrong.
    static func map(_ error: DecodingError) -> AppError {
        func path(_ codingPath: [any CodingKey], _ last: (any CodingKey)? = nil) -> String {
            (codingPath + (last.map { [$0] } ?? []))
                .map { $0.intValue.map(String.init) ?? $0.stringValue }
                .joined(separator: ".")
        }
        switch error {
        case .keyNotFound(let key, let context):
            return .field(path(context.codingPath, key), .required)
        case .valueNotFound(_, let context):
            return context.codingPath.isEmpty ? .malformedRequest : .field(path(context.codingPath), .required)
        case .typeMismatch(_, let context):
            return context.codingPath.isEmpty ? .malformedRequest : .field(path(context.codingPath), .invalidValue)
        case .dataCorrupted(let context):
            return context.codingPath.isEmpty ? .malformedRequest : .field(path(context.codingPath), .invalidValue)
        @unknown default:
            return .malformedRequest
        }
    }

    static func problemResponse(_ error: ClassifiedError, for request: Request) throws -> Response {
        let language = request.language
        let localizer = request.services.localizer
        let document: ProblemDocument
        let headers: HTTPHeaders
        switch error {
        case .app(let appError):
            document = ProblemDocument(appError, language: language, localizer: localizer)
            if case .rateLimited(let seconds) = appError {
                headers = ["Retry-After": String(seconds)]
            } else {
                headers = [:]
            }
        case .http(let status):
            let slug = "http-\(status.code)"
            let key = localizer.has("problem.\(slug)") ? "problem.\(slug)" : "problem.http-other"
            document = ProblemDocument(
                type: "about:blank", title: status.reasonPhrase, status: Int(status.code),
                detail: localizer.text(key, language), errors: nil)
            headers = [:]
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let response = Response(status: error.status, headers: headers, body: .init(data: try encoder.encode(document)))
        response.headers.contentType = .jsonProblem
        return response
    }
}

extension HTTPMediaType {
    static let jsonProblem = HTTPMediaType(
        type: "application", subType: "problem+json", parameters: ["charset": "utf-8"])
}
