import Fluent
import Foundation
import InterludeCore

// MARK: - Accounts

extension APIHandler {
    func checkEmailAvailable(_ input: Operations.CheckEmailAvailable.Input) async throws
        -> Operations.CheckEmailAvailable.Output
    {
        let context = try APIContext.current()
        let available = try await context.accounts.checkAvailability(input.query.email, client: context.client)
        return .ok(.init(body: .json(.init(available: available))))
    }

    func register(_ input: Operations.Register.Input) async throws -> Operations.Register.Output {
        let context = try APIContext.current()
        guard case .json(let body) = input.body else { throw AppError.malformedRequest }
        let currentVersion = try await SiteTexts(database: context.database).privacyPolicyVersion()
        let registration = try Registration.validate(
            email: body.email, password: body.password, privacyPolicyVersion: body.privacyPolicyVersion,
            currentPrivacyPolicyVersion: currentVersion, shareWithResearch: body.shareWithResearch,
            locale: body.locale.rawValue, timeZone: body.timeZone, name: body.name)
        let user = try await context.accounts.register(registration, client: context.client)
        return .created(.init(body: .json(try await .load(user, on: context.database))))
    }

    func verifyEmail(_ input: Operations.VerifyEmail.Input) async throws -> Operations.VerifyEmail.Output {
        let context = try APIContext.current()
        guard case .json(let body) = input.body else { throw AppError.malformedRequest }
        try checkLimits([(body.token, "token", 200)])
        let user = try await context.accounts.verifyEmail(token: body.token, client: context.client)
        return .ok(.init(body: .json(try await .load(user, on: context.database))))
    }

    func resendVerificationEmail(_ input: Operations.ResendVerificationEmail.Input) async throws
        -> Operations.ResendVerificationEmail.Output
    {
        let context = try APIContext.current()
        guard case .json(let body) = input.body else { throw AppError.malformedRequest }
        try await context.accounts.resendVerification(email: body.email, client: context.client)
        return .accepted(.init())
    }

    func correctEmail(_ input: Operations.CorrectEmail.Input) async throws -> Operations.CorrectEmail.Output {
        let context = try APIContext.current()
        guard case .json(let body) = input.body else { throw AppError.malformedRequest }
        try checkLimits([
            (body.email, "email", EmailAddress.maxLength), (body.password, "password", PasswordPolicy.maxLength),
        ])
        let user = try await context.accounts.correctEmail(
            email: body.email, password: body.password, newEmail: body.newEmail, client: context.client)
        return .accepted(.init(body: .json(try await .load(user, on: context.database))))
    }

    // MARK: Sessions

    func login(_ input: Operations.Login.Input) async throws -> Operations.Login.Output {
        let context = try APIContext.current()
        guard case .json(let body) = input.body else { throw AppError.malformedRequest }
        try checkLimits([
            (body.email, "email", EmailAddress.maxLength), (body.password, "password", PasswordPolicy.maxLength),
            (body.code, "code", 16),
        ])
        let (token, authenticated) = try await context.sessions.login(
            email: body.email, password: body.password, code: body.code, client: context.client)
        let user = try await Components.Schemas.User.load(authenticated.user, on: context.database)
        return .created(
            .init(body: .json(.init(token: token.value, expiresAt: authenticated.session.expiresAt, user: user))))
    }

    func logout(_ input: Operations.Logout.Input) async throws -> Operations.Logout.Output {
        let context = try APIContext.current()
        let authenticated = try await context.authenticated(allowPendingPasswordChange: true)
        try await context.sessions.logout(authenticated.session)
        return .noContent
    }

    // MARK: Passwords

    func requestPasswordReset(_ input: Operations.RequestPasswordReset.Input) async throws
        -> Operations.RequestPasswordReset.Output
    {
        let context = try APIContext.current()
        guard case .json(let body) = input.body else { throw AppError.malformedRequest }
        try await context.accounts.requestPasswordReset(email: body.email, client: context.client)
        return .accepted(.init())
    }

    func confirmPasswordReset(_ input: Operations.ConfirmPasswordReset.Input) async throws
        -> Operations.ConfirmPasswordReset.Output
    {
        let context = try APIContext.current()
        guard case .json(let body) = input.body else { throw AppError.malformedRequest }
        try checkLimits([(body.token, "token", 200), (body.newPassword, "newPassword", PasswordPolicy.maxLength)])
        try await context.accounts.confirmPasswordReset(
            token: body.token, newPassword: body.newPassword, client: context.client)
        return .noContent
    }

    func changePassword(_ input: Operations.ChangePassword.Input) async throws -> Operations.ChangePassword.Output {
        let context = try APIContext.current()
        guard case .json(let body) = input.body else { throw AppError.malformedRequest }
        let authenticated = try await context.authenticated(allowPendingPasswordChange: true)
        try checkLimits([
            (body.currentPassword, "currentPassword", PasswordPolicy.maxLength),
            (body.newPassword, "newPassword", PasswordPolicy.maxLength),
        ])
        try await context.accounts.changePassword(
            user: authenticated.user, currentPassword: body.currentPassword, newPassword: body.newPassword,
            keeping: authenticated.session)
        return .noContent
    }

    // MARK: Me

    func getMe(_ input: Operations.GetMe.Input) async throws -> Operations.GetMe.Output {
        let context = try APIContext.current()
        let authenticated = try await context.authenticated(allowPendingPasswordChange: true)
        return .ok(.init(body: .json(try await .load(authenticated.user, on: context.database))))
    }

    func updateMe(_ input: Operations.UpdateMe.Input) async throws -> Operations.UpdateMe.Output {
        let context = try APIContext.current()
        guard case .json(let body) = input.body else { throw AppError.malformedRequest }
        let user = try await context.authenticated().user
        let change = try ProfileChange.validate(
            name: body.name, locale: body.locale?.rawValue, timeZone: body.timeZone,
            shareWithResearch: user.role == .patient ? body.shareWithResearch : nil,
            hidesComparison: user.role == .patient ? body.hideComparison : nil,
            sharesContextWithTherapist: user.role == .patient ? body.shareContextWithTherapist : nil)
        try await context.accounts.updateProfile(user: user, change: change)
        return .ok(.init(body: .json(try await .load(user, on: context.database))))
    }

    func deleteMe(_ input: Operations.DeleteMe.Input) async throws -> Operations.DeleteMe.Output {
        let context = try APIContext.current()
        guard case .json(let body) = input.body else { throw AppError.malformedRequest }
        let user = try await context.authenticated().user
        try checkLimits([(body.password, "password", PasswordPolicy.maxLength)])
        try await ErasureService(database: context.database, services: context.services)
            .deleteOwnAccount(user, password: body.password)
        return .noContent
    }

    // MARK: Site

    func getPrivacyPolicy(_ input: Operations.GetPrivacyPolicy.Input) async throws
        -> Operations.GetPrivacyPolicy.Output
    {
        let context = try APIContext.current()
        let texts = SiteTexts(database: context.database)
        let language = context.request.language
        let text = try await texts.text(.privacyPolicy, language, localizer: context.services.localizer)
        let version = try await texts.privacyPolicyVersion()
        return .ok(
            .init(
                body: .json(
                    .init(
                        version: version, locale: Components.Schemas.Locale(rawValue: language.rawValue) ?? .en,
                        text: text))))
    }
}

extension APIContext {
    var accounts: AccountService { AccountService(database: database, services: services, logger: request.logger) }
    var sessions: SessionService { SessionService(database: database, services: services) }
}
