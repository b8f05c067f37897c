import Foundation
import InterludeCore
import Vapor

/// A research study's consent in the console: its versions, and a new version with its modules.
struct ConsoleConsentController {
    struct VersionForm: Content {
        var version: String?
        var textEn: String?
        var textDe: String?
        /// `on` when current participants must answer the new version before sending more data.
        var reconsentRequired: String?
        /// The arm the version is for; empty: everybody.
        var arm: String?
    }

    func register(on routes: any RoutesBuilder) {
        routes.get("studies", ":studyID", "consent", use: show)
        routes.post("studies", ":studyID", "consent", use: create)
    }

    private func grant(_ permission: StudyPermission, _ request: Request) async throws -> StudyGrant {
        let user = try request.consoleUser(.therapist, .researcher, .admin)
        guard let studyID = request.parameters.get("studyID", as: UUID.self) else { throw AppError.notFound }
        let grant = try await StudyAccess(database: request.db, services: request.services).require(
            permission, in: studyID, by: user)
        guard grant.kind == .research else { throw AppError.notFound }
        return grant
    }

    private func render(
        _ request: Request, _ grant: StudyGrant, form: ConsentPages.Form? = nil, errors: FormErrors? = nil
    )
        async throws -> Response
    {
        let content = try await ConsentPages(viewer: grant.viewer, database: request.db, services: request.services)
            .versions(grant, form: form, errors: errors ?? FormErrors())
        return try await request.renderConsole(
            "console/consent", titleKey: "console.consent.title", content: content, status: errors?.status ?? .ok)
    }

    func show(_ request: Request) async throws -> Response {
        try await render(request, try await grant(.viewStudy, request))
    }

    func create(_ request: Request) async throws -> Response {
        let grant = try await grant(.editStudy, request)
        let form = try request.content.decode(VersionForm.self)
        let modules = ConsentModule.offerable.filter {
            (try? request.content.get(String.self, at: "module_\($0.rawValue)")) == "on"
        }
        var texts: [String: String] = [:]
        if let en = form.textEn, !en.isEmpty { texts["en"] = en }
        if let de = form.textDe, !de.isEmpty { texts["de"] = de }
        do {
            let draft = try ConsentVersionDraft.validate(
                version: form.version, texts: texts, modules: modules.map(\.rawValue),
                reconsentRequired: form.reconsentRequired == "on", arm: form.arm,
                arms: StudyArms.names(of: grant.study))
            _ = try await ConsentService(database: request.db, services: request.services).create(draft, in: grant)
            return request.redirect(to: .consent(study: grant.studyID))
        } catch {
            guard let errors = FormErrors.from(error, request: request) else { throw error }
            let shown = ConsentPages.Form(
                version: form.version ?? "", textEn: form.textEn ?? "", textDe: form.textDe ?? "",
                modules: Set(modules),
                reconsentRequired: form.reconsentRequired == "on", arm: form.arm ?? "")
            return try await render(request, grant, form: shown, errors: errors)
        }
    }
}
