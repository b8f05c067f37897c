import Foundation
import InterludeCore
import OpenAPIRuntime

// MARK: - Research exports

extension APIHandler {
    func listStudyExports(_ input: Operations.ListStudyExports.Input) async throws -> Operations.ListStudyExports.Output
    {
        let context = try APIContext.current()
        let scope = try await context.exportScope(of: try pathID(input.path.studyId))
        let request = try PageRequest(cursor: input.query.cursor, limit: input.query.limit)
        let page = ListPage(
            of: try await context.exports.history(of: scope, limit: nil), request, moment: \.createdAt, id: { $0.id! })
        return .ok(
            .init(
                headers: .init(nextCursor: page.next),
                body: .json(try page.items.map(Components.Schemas.StudyExport.init))))
    }

    func startStudyExport(_ input: Operations.StartStudyExport.Input) async throws -> Operations.StartStudyExport.Output
    {
        let context = try APIContext.current()
        let scope = try await context.exportScope(of: try pathID(input.path.studyId))
        let export = try await context.exports.start(scope, since: input.query.since)
        return .accepted(.init(body: .json(try .init(export))))
    }

    func getExport(_ input: Operations.GetExport.Input) async throws -> Operations.GetExport.Output {
        let context = try APIContext.current()
        let id = try pathID(input.path.exportId)
        let scope = try await context.exportScope(of: try await context.exports.studyID(of: id))
        return .ok(.init(body: .json(try .init(try await context.exports.export(id, in: scope)))))
    }

    func downloadExport(_ input: Operations.DownloadExport.Input) async throws -> Operations.DownloadExport.Output {
        let context = try APIContext.current()
        let id = try pathID(input.path.exportId)
        let scope = try await context.exportScope(of: try await context.exports.studyID(of: id))
        let file = try await context.exports.download(id, in: scope)
        return .ok(
            .init(
                headers: .init(contentDisposition: "attachment; filename=\"\(ExportService.fileName(of: id))\""),
                body: .applicationZip(HTTPBody(file))))
    }
}

extension APIContext {
    var exports: ExportService { ExportService(database: database, services: services) }

    /// The caller's way to a study's exports: a signed-in member who may export it, or a personal access token
    /// with `exports:read` on it whose holder still may.
    func exportScope(of studyID: UUID) async throws -> StudyExportScope {
        let user: UserRecord
        if let bearer = request.headers.bearerAuthorization?.token, bearer.hasPrefix(AccessTokenRules.prefix) {
            guard
                let holder = try await AccessTokenService(database: database, services: services).authenticate(
                    bearer, scope: .exportsRead)
            else { throw AppError.unauthenticated }
            guard holder.studies.contains(studyID) else { throw AppError.forbidden(.notAllowed) }
            user = holder.user
        } else {
            user = try await self.user(.therapist, .researcher, .admin)
        }
        return try StudyExportScope(try await access.require(.exportData, in: studyID, by: user), database: database)
    }
}

extension HTTPBody {
    /// A stored file sent in pieces as they are read, never whole in memory.
    convenience init(_ file: StoredBytes) {
        self.init(file.chunks, length: .known(file.size), iterationBehavior: .single)
    }
}

extension Components.Schemas.StudyExport {
    init(_ export: ExportRecord) throws {
        self.init(
            id: try export.requireID().uuidString, studyId: export.$study.id.uuidString,
            status: .init(rawValue: export.status.rawValue) ?? .failed, progress: export.progress,
            participants: export.participants, prompts: export.prompts, responses: export.responses,
            since: export.since,
            error: export.error, createdAt: export.createdAt, finishedAt: export.finishedAt,
            expiresAt: export.expiresAt,
            size: export.status == .ready ? export.size : nil)
    }
}
