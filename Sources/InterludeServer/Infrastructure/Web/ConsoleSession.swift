import Crypto
import Foundation
import InterludeCore
import Vapor

/// The console's cookie session: who is signed in, checked on every console request, with the CSRF token
/// every form must post back.
enum ConsoleSession {
    static let cookieName = "interlude_console"
    static let loginCSRFCookie = "interlude_login_csrf"

    private struct Key: StorageKey {
        typealias Value = SessionService.Authenticated
    }

    static func cookie(_ token: String, settings: Settings, maxAge: Int?) -> HTTPCookies.Value {
        HTTPCookies.Value(
            string: token, maxAge: maxAge, path: ConsoleURL.root, isSecure: settings.secureCookies, isHTTPOnly: true,
            sameSite: .lax)
    }

    /// Compares two secrets in time independent of where they differ.
    static func matches(_ given: String?, _ expected: String?) -> Bool {
        guard let given, let expected, !expected.isEmpty else { return false }
        let left = Array(given.utf8)
        let right = Array(expected.utf8)
        guard left.count == right.count else { return false }
        var difference: UInt8 = 0
        for index in left.indices { difference |= left[index] ^ right[index] }
        return difference == 0
    }

    static func set(_ authenticated: SessionService.Authenticated, on request: Request) {
        request.storage[Key.self] = authenticated
    }

    static func get(_ request: Request) -> SessionService.Authenticated? {
        request.storage[Key.self]
    }
}

/// Lets only signed-in staff through, sends a staff member with a one-time password to change it first, and
/// refuses any form post whose CSRF token does not match the session's.
struct ConsoleAuthMiddleware: AsyncMiddleware {
    /// Where a staff member who must still set two-factor sign-in up may go.
    static let setupPaths: Set<String> = [ConsoleURL.password.path, ConsoleURL.twoFactor.path, ConsoleURL.logout.path]

    func respond(to request: Request, chainingTo next: any AsyncResponder) async throws -> Response {
        guard let token = request.cookies[ConsoleSession.cookieName]?.string,
            let authenticated = try await SessionService(database: request.db, services: request.services)
                .authenticate(token: token, kind: .console),
            authenticated.user.role.isStaff
        else {
            let next = request.requestPath + (request.url.query.map { "?\($0)" } ?? "")
            return request.redirect(to: .login(next: next))
        }
        if request.method == .POST {
            let given = try? request.content.get(String.self, at: "_csrf")
            guard ConsoleSession.matches(given, authenticated.session.csrfToken) else {
                throw AppError.forbidden(.csrfMismatch)
            }
        }
        if authenticated.user.mustChangePassword && request.requestPath != ConsoleURL.password.path
            && request.requestPath != ConsoleURL.logout.path
        {
            return request.redirect(to: .password)
        }
        if !Self.setupPaths.contains(request.requestPath),
            try await TwoFactorService(database: request.db, services: request.services).mustSetUp(authenticated.user)
        {
            return request.redirect(to: .password)
        }
        ConsoleSession.set(authenticated, on: request)
        return try await next.respond(to: request)
    }
}

extension Request {
    /// The signed-in staff member, who must hold one of `roles`.
    func consoleUser(_ roles: Role...) throws -> UserRecord {
        guard let authenticated = ConsoleSession.get(self) else { throw AppError.unauthenticated }
        guard roles.isEmpty || roles.contains(authenticated.user.role) else {
            throw AppError.forbidden(.notAllowed)
        }
        return authenticated.user
    }

    /// Renders a console page for the signed-in staff member, in their language, with their navigation.
    func renderConsole<Content: Encodable & Sendable>(
        _ template: String, titleKey: String, content: Content, script: String? = nil, status: HTTPResponseStatus = .ok
    ) async throws -> Response {
        guard let authenticated = ConsoleSession.get(self) else { throw AppError.unauthenticated }
        let user = authenticated.user
        let language = user.language
        let localizer = services.localizer
        let inbox = AlertInbox(staff: user, database: db, services: services)
        let openAlerts = try await inbox.openCount()
        let urgent = try await inbox.urgentCount()
        let links = ConsoleNavigation.links(for: user.role).map { link in
            ConsoleNav.Link(
                href: link.href, label: localizer.text(link.labelKey, language),
                current: url.path == link.href || url.path.hasPrefix(link.href + "/"),
                badge: link.href == ConsoleURL.alerts.path ? openAlerts : 0)
        }
        let nav = ConsoleNav(
            email: user.email, role: localizer.text("role.\(user.role.rawValue)", language), links: links,
            urgent: urgent > 0 ? localizer.text("console.alerts.urgent", count: urgent, language) : "")
        return try await renderPage(
            template, titleKey: titleKey, content: content, language: language,
            csrf: authenticated.session.csrfToken, nav: nav, script: script, status: status)
    }
}

/// Which console areas each role sees.
enum ConsoleNavigation {
    struct Link {
        let href: String
        let labelKey: String
    }

    static func links(for role: Role) -> [Link] {
        var links: [Link] = []
        switch role {
        case .therapist:
            links = [
                Link(href: ConsoleURL.patients.path, labelKey: "console.nav.patients"),
                Link(href: ConsoleURL.alerts.path, labelKey: "console.nav.alerts"),
                Link(href: ConsoleURL.practicePlans.path, labelKey: "console.nav.plans"),
                Link(href: ConsoleURL.practiceRules.path, labelKey: "console.nav.rules"),
                Link(href: ConsoleURL.practiceRecordSettings.path, labelKey: "console.nav.records"),
                Link(href: ConsoleURL.studies.path, labelKey: "console.nav.studies"),
                Link(href: ConsoleURL.instruments.path, labelKey: "console.nav.instruments"),
                Link(href: ConsoleURL.pairingCodes.path, labelKey: "console.nav.pairingCodes"),
                Link(href: ConsoleURL.profile.path, labelKey: "console.nav.profile"),
            ]
        case .researcher:
            links = [
                Link(href: ConsoleURL.studies.path, labelKey: "console.nav.studies"),
                Link(href: ConsoleURL.alerts.path, labelKey: "console.nav.alerts"),
                Link(href: ConsoleURL.instruments.path, labelKey: "console.nav.instruments"),
            ]
        case .admin:
            links = [
                Link(href: ConsoleURL.users.path, labelKey: "console.nav.users"),
                Link(href: ConsoleURL.alerts.path, labelKey: "console.nav.alerts"),
                Link(href: ConsoleURL.studies.path, labelKey: "console.nav.studies"),
                Link(href: ConsoleURL.instruments.path, labelKey: "console.nav.instruments"),
                Link(href: ConsoleURL.audit.path, labelKey: "console.nav.audit"),
                Link(href: ConsoleURL.settings.path, labelKey: "console.nav.settings"),
            ]
        case .patient:
            links = []
        }
        return links + [Link(href: ConsoleURL.password.path, labelKey: "console.nav.password")]
    }

    /// Where a staff member lands after signing in.
    static func home(for role: Role) -> String {
        links(for: role).first?.href ?? ConsoleURL.password.path
    }
}
