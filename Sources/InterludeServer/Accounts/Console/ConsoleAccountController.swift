import Foundation
import InterludeCore
import Vapor

/// Signing in to and out of the console, and changing one's password there.
struct ConsoleAccountController {
    struct LoginForm: Content {
        var email: String
        var password: String
        var code: String?
        var _csrf: String?
        var next: String?
    }

    struct LoginContent: Encodable, Sendable {
        var email: String
        var next: String
        var loginCSRF: String
        var errors: FormErrors
    }

    struct PasswordForm: Content {
        var currentPassword: String
        var newPassword: String
        var repeatPassword: String
    }

    struct TwoFactorForm: Content {
        var code: String
        var currentPassword: String?
    }

    struct PreferencesForm: Content {
        var locale: String
        var timeZone: String
    }

    func register(public routes: any RoutesBuilder, signedIn: any RoutesBuilder) {
        routes.get("console", "login", use: showLogin)
        routes.post("console", "login", use: login)
        signedIn.post("logout", use: logout)
        signedIn.get("password", use: showPassword)
        signedIn.post("password", use: changePassword)
        signedIn.post("preferences", use: savePreferences)
        signedIn.post("two-factor", use: enableTwoFactor)
        signedIn.post("two-factor", "disable", use: disableTwoFactor)
        signedIn.get { request in
            request.redirect(to: ConsoleNavigation.home(for: try request.consoleUser().role))
        }
    }

    private func renderLogin(
        _ request: Request, email: String = "", next: String?, errors: FormErrors = FormErrors(),
        status: HTTPResponseStatus = .ok
    ) async throws -> Response {
        // The login form has no session yet; its CSRF token is a cookie the form must echo (double submit).
        let loginCSRF = SecretToken.generate().value
        let response = try await request.renderPage(
            "console/login", titleKey: "console.login.title",
            content: LoginContent(
                email: email, next: localPath(next, fallback: ""), loginCSRF: loginCSRF, errors: errors),
            status: status)
        response.cookies[ConsoleSession.loginCSRFCookie] = HTTPCookies.Value(
            string: loginCSRF, maxAge: 3600, path: ConsoleURL.root, isSecure: request.services.settings.secureCookies,
            isHTTPOnly: true, sameSite: .strict)
        return response
    }

    func showLogin(_ request: Request) async throws -> Response {
        try await renderLogin(request, next: try? request.query.get(String.self, at: "next"))
    }

    func login(_ request: Request) async throws -> Response {
        let form = try request.content.decode(LoginForm.self)
        guard ConsoleSession.matches(form._csrf, request.cookies[ConsoleSession.loginCSRFCookie]?.string) else {
            throw AppError.forbidden(.csrfMismatch)
        }
        let services = request.services
        do {
            let (token, authenticated) = try await SessionService(database: request.db, services: services)
                .consoleLogin(
                    email: form.email, password: form.password, code: form.code,
                    client: .client(request.clientAddress(trustedProxies: services.settings.trustedProxies)))
            let home = ConsoleNavigation.home(for: authenticated.user.role)
            let response = request.redirect(
                to: authenticated.user.mustChangePassword
                    ? ConsoleURL.password.path : localPath(form.next, fallback: home))
            response.cookies[ConsoleSession.cookieName] = ConsoleSession.cookie(
                token.value, settings: services.settings, maxAge: Int(AccountLifetimes.consoleSession))
            response.cookies[ConsoleSession.loginCSRFCookie] = .expired
            return response
        } catch {
            guard let errors = FormErrors.from(error, request: request) else { throw error }
            return try await renderLogin(
                request, email: form.email, next: form.next, errors: errors, status: errors.status)
        }
    }

    func logout(_ request: Request) async throws -> Response {
        if let authenticated = ConsoleSession.get(request) {
            try await SessionService(database: request.db, services: request.services).logout(authenticated.session)
        }
        let response = request.redirect(to: .login())
        response.cookies[ConsoleSession.cookieName] = .expired
        return response
    }

    /// The account page: preferences and password; also where a one-time password is replaced.
    private func renderAccount(
        _ request: Request, errors: FormErrors = FormErrors(), preferenceErrors: FormErrors = FormErrors(),
        twoFactorErrors: FormErrors = FormErrors(), timeZone: String? = nil, status: HTTPResponseStatus = .ok
    ) async throws -> Response {
        let content = try await AccountPages(
            user: try request.consoleUser(), database: request.db, services: request.services
        )
        .account(
            .init(
                errors: errors, preferenceErrors: preferenceErrors, twoFactorErrors: twoFactorErrors,
                timeZone: timeZone,
                twoFactorChanged: request.query[String.self, at: "twoFactor"] != nil,
                preferencesSaved: request.query[String.self, at: "saved"] != nil))
        return try await request.renderConsole(
            "console/password", titleKey: "console.password.title", content: content, status: status)
    }

    func showPassword(_ request: Request) async throws -> Response {
        try await renderAccount(request)
    }

    func savePreferences(_ request: Request) async throws -> Response {
        let user = try request.consoleUser()
        let form = try request.content.decode(PreferencesForm.self)
        do {
            let change = try ProfileChange.validate(
                name: nil, locale: form.locale, timeZone: form.timeZone, shareWithResearch: nil)
            try await AccountService(database: request.db, services: request.services, logger: request.logger)
                .updateProfile(user: user, change: change)
            return request.redirect(to: .password, query: [("saved", "1")])
        } catch {
            guard let errors = FormErrors.from(error, request: request) else { throw error }
            return try await renderAccount(
                request, preferenceErrors: errors, timeZone: form.timeZone, status: errors.status)
        }
    }

    func changePassword(_ request: Request) async throws -> Response {
        let user = try request.consoleUser()
        let form = try request.content.decode(PasswordForm.self)
        do {
            if form.newPassword != form.repeatPassword {
                throw AppError.field("repeatPassword", .mismatch)
            }
            try await AccountService(database: request.db, services: request.services, logger: request.logger)
                .changePassword(
                    user: user, currentPassword: form.currentPassword, newPassword: form.newPassword,
                    keeping: ConsoleSession.get(request)?.session)
            return request.redirect(to: ConsoleNavigation.home(for: user.role) + "?passwordChanged=1")
        } catch {
            guard let errors = FormErrors.from(error, request: request) else { throw error }
            return try await renderAccount(request, errors: errors, status: errors.status)
        }
    }

    func enableTwoFactor(_ request: Request) async throws -> Response {
        let user = try request.consoleUser()
        let form = try request.content.decode(TwoFactorForm.self)
        do {
            try await TwoFactorService(database: request.db, services: request.services).confirm(user, code: form.code)
            return request.redirect(to: .password, query: [("twoFactor", "on")])
        } catch {
            guard let errors = FormErrors.from(error, request: request) else { throw error }
            return try await renderAccount(request, twoFactorErrors: errors, status: errors.status)
        }
    }

    func disableTwoFactor(_ request: Request) async throws -> Response {
        let user = try request.consoleUser()
        let form = try request.content.decode(TwoFactorForm.self)
        do {
            try await TwoFactorService(database: request.db, services: request.services)
                .disable(user, password: form.currentPassword ?? "", code: form.code)
            return request.redirect(to: .password, query: [("twoFactor", "off")])
        } catch {
            guard let errors = FormErrors.from(error, request: request) else { throw error }
            return try await renderAccount(request, twoFactorErrors: errors, status: errors.status)
        }
    }
}
