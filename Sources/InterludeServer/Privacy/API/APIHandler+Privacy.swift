import Foundation
import InterludeCore
import OpenAPIRuntime

// MARK: - The person's own data: who looked at it

extension APIHandler {
    func getMyAccessLog(_ input: Operations.GetMyAccessLog.Input) async throws -> Operations.GetMyAccessLog.Output {
        let context = try APIContext.current()
        let patient = try await context.user(.patient)
        try checkLimits([(input.query.before, "before", 80), (input.query.cursor, "cursor", 80)])
        let page = try await OwnAccessLog(database: context.database)
            .page(of: patient, before: input.query.cursor ?? input.query.before, limit: input.query.limit ?? 50)
        let localizer = context.services.localizer
        let language = context.request.language
        return .ok(
            .init(
                headers: .init(nextCursor: page.next?.text),
                body: .json(
                    .init(
                        entries: page.entries.map { .init($0, localizer: localizer, language: language) },
                        next: page.next?.text))))
    }
}

extension Components.Schemas.AccessLogEntry {
    init(_ entry: OwnAccessLog.Entry, localizer: Localizer, language: Language) {
        let actor: String
        switch entry.actorRole {
        case .therapist:
            actor =
                entry.therapistName.map { localizer.text("accessLog.actor.therapist", language, ["name": $0]) }
                ?? localizer.text("accessLog.actor.someTherapist", language)
        case .researcher:
            actor =
                entry.study.map { localizer.text("accessLog.actor.research", language, ["study": $0.title]) }
                ?? localizer.text("accessLog.actor.researcher", language)
        case .admin, .patient:
            actor = localizer.text("accessLog.actor.admin", language)
        }
        self.init(
            id: entry.id.lowercasedText, occurredAt: entry.occurredAt, action: entry.action,
            activity: localizer.text("audit.\(entry.action)", language),
            actorRole: entry.actorRole == .therapist
                ? .therapist : entry.actorRole == .researcher ? .researcher : .admin,
            actor: actor, studyId: entry.study?.id?.lowercasedText, studyTitle: entry.study?.title)
    }
}

// MARK: - The person's own data: a copy of it

extension APIHandler {
    func requestMyExport(_ input: Operations.RequestMyExport.Input) async throws -> Operations.RequestMyExport.Output {
        let context = try APIContext.current()
        let patient = try await context.user(.patient)
        return .accepted(.init(body: .json(try .init(try await context.selfExports.request(by: patient)))))
    }

    func getMyExportStatus(_ input: Operations.GetMyExportStatus.Input) async throws
        -> Operations.GetMyExportStatus.Output
    {
        let context = try APIContext.current()
        let patient = try await context.user(.patient)
        guard let latest = try await context.selfExports.latest(of: patient) else { throw AppError.notFound }
        return .ok(.init(body: .json(try .init(latest))))
    }

    func downloadMyExport(_ input: Operations.DownloadMyExport.Input) async throws -> Operations.DownloadMyExport.Output
    {
        let context = try APIContext.current()
        let patient = try await context.user(.patient)
        let copy = try await context.selfExports.download(by: patient)
        return .ok(
            .init(
                headers: .init(contentDisposition: "attachment; filename=\"interlude-my-data.zip\""),
                body: .applicationZip(HTTPBody(copy))))
    }
}

extension APIContext {
    var selfExports: SelfExportService { SelfExportService(database: database, services: services) }
}

extension Components.Schemas.SelfExport {
    init(_ record: SelfExportRecord) throws {
        self.init(
            id: try record.requireID().lowercasedText, status: .init(rawValue: record.status.rawValue) ?? .failed,
            createdAt: record.createdAt, finishedAt: record.finishedAt, expiresAt: record.expiresAt,
            downloadedAt: record.downloadedAt,
            size: record.size)
    }
}
