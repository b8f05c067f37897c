import Foundation
import InterludeCore

// MARK: - A research study's team

extension APIHandler {
    func listStudyStaff(_ input: Operations.ListStudyStaff.Input) async throws -> Operations.ListStudyStaff.Output {
        let context = try APIContext.current()
        let user = try await context.user(.therapist, .researcher, .admin)
        let grant = try await context.access.require(.viewTeam, in: try pathID(input.path.studyId), by: user)
        let request = try PageRequest(cursor: input.query.cursor, limit: input.query.limit)
        let page = ListPage(
            of: try await context.team.members(of: grant), request,
            key: { "\($0.role.rank)" + SortKey.words($0.user.email) },
            id: { $0.user.id! }, descending: false)
        return .ok(
            .init(
                headers: .init(nextCursor: page.next),
                body: .json(try page.items.map(Components.Schemas.StudyStaffMember.init))))
    }

    func addStudyStaff(_ input: Operations.AddStudyStaff.Input) async throws -> Operations.AddStudyStaff.Output {
        let context = try APIContext.current()
        guard case .json(let body) = input.body else { throw AppError.malformedRequest }
        let user = try await context.user(.therapist, .researcher, .admin)
        try checkLimits([(body.email, "email", EmailAddress.maxLength)])
        let grant = try await context.access.require(.manageTeam, in: try pathID(input.path.studyId), by: user)
        let member = try await context.team.add(email: body.email, role: StudyRole(body.role), in: grant)
        return .created(.init(body: .json(try .init(member))))
    }

    func changeStudyStaff(_ input: Operations.ChangeStudyStaff.Input) async throws -> Operations.ChangeStudyStaff.Output
    {
        let context = try APIContext.current()
        guard case .json(let body) = input.body else { throw AppError.malformedRequest }
        let user = try await context.user(.therapist, .researcher, .admin)
        let grant = try await context.access.require(.manageTeam, in: try pathID(input.path.studyId), by: user)
        let member = try await context.team.change(try pathID(input.path.userId), to: StudyRole(body.role), in: grant)
        return .ok(.init(body: .json(try .init(member))))
    }

    func removeStudyStaff(_ input: Operations.RemoveStudyStaff.Input) async throws -> Operations.RemoveStudyStaff.Output
    {
        let context = try APIContext.current()
        let user = try await context.user(.therapist, .researcher, .admin)
        let grant = try await context.access.require(.manageTeam, in: try pathID(input.path.studyId), by: user)
        try await context.team.remove(try pathID(input.path.userId), in: grant)
        return .noContent
    }
}

extension APIContext {
    var team: StudyTeamService { StudyTeamService(database: database, services: services) }
}

extension StudyRole {
    init(_ role: Components.Schemas.StudyRole) {
        switch role {
        case .owner: self = .owner
        case .therapist: self = .therapist
        case .researcher: self = .researcher
        case .dataManager: self = .dataManager
        }
    }

    var document: Components.Schemas.StudyRole {
        switch self {
        case .owner: .owner
        case .therapist: .therapist
        case .researcher: .researcher
        case .dataManager: .dataManager
        }
    }
}

extension Components.Schemas.StudyStaffMember {
    init(_ member: StudyTeamService.Member) throws {
        self.init(
            userId: try member.user.requireID().uuidString, email: member.user.email, name: member.user.name,
            role: member.role.document)
    }
}
