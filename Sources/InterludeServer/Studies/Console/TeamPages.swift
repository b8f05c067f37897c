import Fluent
import Foundation
import InterludeCore

/// The page of a research study's team: who is on it in which role and, for those who choose the team, the forms
/// to add, change and remove.
struct TeamPages: Sendable {
    struct MemberRow: Encodable, Sendable {
        var userID: String
        var name: String
        var email: String
        var role: String
        var roleLabel: String
        var roles: [SelectOption]
        var changeAction: String
        var removeAction: String
    }

    struct TeamContent: Encodable, Sendable {
        var studyID: String
        var studyTitle: String
        var studyLink: String
        var members: [MemberRow]
        var canManage: Bool
        var addAction: String
        var roles: [SelectOption]
        var email: String
        var errors: FormErrors
    }

    let viewer: UserRecord
    let database: any Database
    let services: AppServices

    private var language: Language { viewer.language }

    func team(_ grant: StudyGrant, email: String = "", role: StudyRole = .researcher, errors: FormErrors = FormErrors())
        async throws
        -> TeamContent
    {
        let members = try await StudyTeamService(database: database, services: services).members(of: grant)
        let rows = try members.map { member in
            let userID = try member.user.requireID()
            return MemberRow(
                userID: userID.uuidString, name: member.user.name ?? "", email: member.user.email,
                role: member.role.rawValue,
                roleLabel: label(member.role), roles: options(selected: member.role),
                changeAction: ConsoleURL.teamMember(study: grant.studyID, user: userID).path,
                removeAction: ConsoleURL.removeTeamMember(study: grant.studyID, user: userID).path)
        }
        return TeamContent(
            studyID: grant.studyID.uuidString, studyTitle: grant.study.titles.text(language),
            studyLink: ConsoleURL.study(grant.studyID).path,
            members: rows, canManage: grant.allows(.manageTeam), addAction: ConsoleURL.team(study: grant.studyID).path,
            roles: options(selected: role), email: email, errors: errors)
    }

    private func label(_ role: StudyRole) -> String {
        services.localizer.text("studyRole.\(role.rawValue)", language)
    }

    private func options(selected: StudyRole) -> [SelectOption] {
        StudyRole.allCases.map { SelectOption(value: $0.rawValue, label: label($0), selected: $0 == selected) }
    }
}
