import Foundation
import InterludeCore
import Vapor

/// A study's exports in the console: start one, follow its progress, download it; make and revoke access tokens
/// for scripts that fetch this study's exports.
struct ConsoleExportController {
    struct StartForm: Content {
        var since: String?
    }

    struct TokenForm: Content {
        var name: String?
        var days: Int?
    }

    func register(on routes: any RoutesBuilder) {
        routes.get("studies", ":studyID", "exports", use: show)
        routes.post("studies", ":studyID", "exports", use: start)
        routes.get("studies", ":studyID", "exports", ":exportID", use: download)
        routes.post("studies", ":studyID", "exports", "tokens", use: createToken)
        routes.post("studies", ":studyID", "exports", "tokens", ":tokenID", "delete", use: revokeToken)
    }

    private func scope(_ request: Request) async throws -> StudyExportScope {
        let user = try request.consoleUser(.therapist, .researcher, .admin)
        guard let studyID = request.parameters.get("studyID", as: UUID.self) else { throw AppError.notFound }
        let grant = try await StudyAccess(database: request.db, services: request.services).require(
            .exportData, in: studyID, by: user)
        return try StudyExportScope(grant, database: request.db)
    }

    private func exports(_ request: Request) -> ExportService {
        ExportService(database: request.db, services: request.services)
    }

    private func render(
        _ request: Request, _ scope: StudyExportScope, status: HTTPResponseStatus = .ok,
        build: (ExportPages) async throws -> ExportPages.ExportsContent
    ) async throws -> Response {
        let pages = ExportPages(viewer: scope.grant.viewer, database: request.db, services: request.services)
        return try await request.renderConsole(
            "console/exports", titleKey: "console.exports.title", content: try await build(pages), status: status)
    }

    func show(_ request: Request) async throws -> Response {
        let scope = try await scope(request)
        return try await render(request, scope) { try await $0.page(scope) }
    }

    func start(_ request: Request) async throws -> Response {
        let scope = try await scope(request)
        let form = try request.content.decode(StartForm.self)
        let raw = form.since?.trimmingCharacters(in: .whitespaces) ?? ""
        do {
            var since: Date?
            if !raw.isEmpty {
                guard let parsed = ISO8601DateFormatter().date(from: raw) else {
                    throw AppError.field("since", .invalidFormat)
                }
                since = parsed
            }
            _ = try await exports(request).start(scope, since: since)
            return request.redirect(to: .exports(study: scope.grant.studyID))
        } catch {
            guard let errors = FormErrors.from(error, request: request) else { throw error }
            return try await render(request, scope, status: errors.status) {
                try await $0.page(scope, since: raw, errors: errors)
            }
        }
    }

    func download(_ request: Request) async throws -> Response {
        let scope = try await scope(request)
        guard let id = request.parameters.get("exportID", as: UUID.self) else { throw AppError.notFound }
        let file = try await exports(request).download(id, in: scope)
        var headers = HTTPHeaders()
        headers.contentType = HTTPMediaType(type: "application", subType: "zip")
        headers.replaceOrAdd(
            name: .contentDisposition, value: "attachment; filename=\"\(ExportService.fileName(of: id))\"")
        return Response(status: .ok, headers: headers, body: .init(stored: file))
    }

    func createToken(_ request: Request) async throws -> Response {
        let scope = try await scope(request)
        let form = try request.content.decode(TokenForm.self)
        do {
            let created = try await AccessTokenService(database: request.db, services: request.services).create(
                for: scope.grant.viewer, name: form.name ?? "", scope: .exportsRead, studyIDs: [scope.grant.studyID],
                expiresInDays: form.days ?? 0)
            return try await render(request, scope) { try await $0.page(scope, newToken: created.secret) }
        } catch {
            guard let errors = FormErrors.from(error, request: request) else { throw error }
            return try await render(request, scope, status: errors.status) {
                try await $0.page(scope, tokenName: form.name ?? "", errors: errors)
            }
        }
    }

    func revokeToken(_ request: Request) async throws -> Response {
        let scope = try await scope(request)
        guard let id = request.parameters.get("tokenID", as: UUID.self) else { throw AppError.notFound }
        try await AccessTokenService(database: request.db, services: request.services).revoke(
            id, of: scope.grant.viewer)
        return request.redirect(to: .exports(study: scope.grant.studyID))
    }
}
