import Foundation
import InterludeCore
import OpenAPIRuntime

/// Invitations by email, and password-reset links a therapist sends their client.
extension APIHandler {
    func createInvitation(_ input: Operations.CreateInvitation.Input) async throws -> Operations.CreateInvitation.Output
    {
        let context = try APIContext.current()
        guard case .json(let body) = input.body else { throw AppError.malformedRequest }
        let therapist = try await context.user(.therapist)
        let language = body.locale.flatMap { Language(rawValue: $0.rawValue) } ?? therapist.language
        let sent = try await context.invitations.invite(email: body.email, language: language, by: therapist)
        return .created(.init(body: .json(.init(email: sent.email, expiresAt: sent.expiresAt))))
    }

    func acceptInvitation(_ input: Operations.AcceptInvitation.Input) async throws -> Operations.AcceptInvitation.Output
    {
        let context = try APIContext.current()
        guard case .json(let body) = input.body else { throw AppError.malformedRequest }
        try checkLimits([
            (body.token, "token", 200), (body.password, "password", PasswordPolicy.maxLength),
            (body.timeZone, "timeZone", 64),
            (body.name, "name", Registration.nameMaxLength), (body.dateOfBirth, "dateOfBirth", 10),
            (body.gender, "gender", 20),
        ])
        let invitation = try await context.invitations.invitedAddress(token: body.token, client: context.client)
        let zone = TimeZone(identifier: body.timeZone) ?? .gmt
        let acceptance = try InvitationAcceptance.validate(
            email: invitation.email, password: body.password, privacyPolicyVersion: body.privacyPolicyVersion,
            currentPrivacyPolicyVersion: try await SiteTexts(database: context.database).privacyPolicyVersion(),
            shareWithResearch: body.shareWithResearch, locale: body.locale.rawValue, timeZone: body.timeZone,
            name: body.name,
            dateOfBirth: body.dateOfBirth, gender: body.gender, today: LocalDate(context.now, in: zone))
        let accepted = try await context.invitations.accept(invitation, acceptance)
        let user = try await Components.Schemas.User.load(accepted.session.user, on: context.database)
        return .created(
            .init(
                body: .json(
                    .init(token: accepted.token.value, expiresAt: accepted.session.session.expiresAt, user: user))))
    }

    func sendPatientPasswordReset(_ input: Operations.SendPatientPasswordReset.Input) async throws
        -> Operations.SendPatientPasswordReset.Output
    {
        let context = try APIContext.current()
        let chart = try await context.chart(of: input.path.patientId)
        try await context.accounts.sendPasswordReset(to: try await chart.passwordResetRecipient())
        return .accepted(.init())
    }
}

extension APIContext {
    var invitations: InvitationService {
        InvitationService(database: database, services: services, logger: request.logger)
    }
}
