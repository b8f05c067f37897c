import Foundation
import InterludeCore
import Vapor

/// A research study's team in the console: the list, and adding, changing and removing members.
struct ConsoleTeamController {
    struct MemberForm: Content {
        var email: String?
        var role: String
    }

    func register(on routes: any RoutesBuilder) {
        routes.get("studies", ":studyID", "team", use: show)
        routes.post("studies", ":studyID", "team", use: add)
        routes.post("studies", ":studyID", "team", ":userID", use: change)
        routes.post("studies", ":studyID", "team", ":userID", "delete", use: remove)
    }

    private func grant(_ permission: StudyPermission, _ request: Request) async throws -> StudyGrant {
        let user = try request.consoleUser(.therapist, .researcher, .admin)
        guard let studyID = request.parameters.get("studyID", as: UUID.self) else { throw AppError.notFound }
        return try await StudyAccess(database: request.db, services: request.services).require(
            permission, in: studyID, by: user)
    }

    private func team(_ request: Request) -> StudyTeamService {
        StudyTeamService(database: request.db, services: request.services)
    }

    private func render(_ request: Request, _ content: TeamPages.TeamContent, status: HTTPResponseStatus = .ok)
        async throws -> Response
    {
        try await request.renderConsole(
            "console/team", titleKey: "console.team.title", content: content, status: status)
    }

    private func pages(_ request: Request, _ grant: StudyGrant) -> TeamPages {
        TeamPages(viewer: grant.viewer, database: request.db, services: request.services)
    }

    func show(_ request: Request) async throws -> Response {
        let grant = try await grant(.viewTeam, request)
        return try await render(request, try await pages(request, grant).team(grant))
    }

    func add(_ request: Request) async throws -> Response {
        let grant = try await grant(.manageTeam, request)
        let form = try request.content.decode(MemberForm.self)
        do {
            _ = try await team(request).add(email: form.email ?? "", role: try Self.role(form.role), in: grant)
            return request.redirect(to: .team(study: grant.studyID))
        } catch {
            guard let errors = FormErrors.from(error, request: request) else { throw error }
            let role = StudyRole(rawValue: form.role) ?? .researcher
            let content = try await pages(request, grant).team(
                grant, email: form.email ?? "", role: role, errors: errors)
            return try await render(request, content, status: errors.status)
        }
    }

    func change(_ request: Request) async throws -> Response {
        let grant = try await grant(.manageTeam, request)
        let form = try request.content.decode(MemberForm.self)
        do {
            _ = try await team(request).change(try userID(request), to: try Self.role(form.role), in: grant)
            return request.redirect(to: .team(study: grant.studyID))
        } catch {
            guard let errors = FormErrors.from(error, request: request) else { throw error }
            return try await render(
                request, try await pages(request, grant).team(grant, errors: errors), status: errors.status)
        }
    }

    func remove(_ request: Request) async throws -> Response {
        let grant = try await grant(.manageTeam, request)
        do {
            try await team(request).remove(try userID(request), in: grant)
            return request.redirect(
                to: grant.viewer.id == (try userID(request)) ? .studies : .team(study: grant.studyID))
        } catch {
            guard let errors = FormErrors.from(error, request: request) else { throw error }
            return try await render(
                request, try await pages(request, grant).team(grant, errors: errors), status: errors.status)
        }
    }

    private func userID(_ request: Request) throws -> UUID {
        guard let id = request.parameters.get("userID", as: UUID.self) else { throw AppError.notFound }
        return id
    }

    private static func role(_ raw: String) throws -> StudyRole {
        guard let role = StudyRole(rawValue: raw) else { throw AppError.field("role", .invalidValue) }
        return role
    }
}
