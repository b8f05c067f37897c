import Foundation
import InterludeCore
import Vapor

/// What every rendered page carries: its language, texts, title, and the page's own content.
struct Page<Content: Encodable & Sendable>: Encodable, Sendable {
    let lang: String
    /// Every interface text in the page's language; `app.login.title` is `t.app_login_title` in a template.
    let t: [String: String]
    let title: String
    /// The CSRF token every console form posts back.
    let csrf: String?
    /// The signed-in staff member's navigation, on console pages.
    let nav: ConsoleNav?
    /// The script module the page loads, if any, by its path below `assets`.
    let script: String?
    /// Where this release's styles and scripts are found (`/assets/<version>`).
    let assets: String
    /// The patient app page's own module, named so a phone fetches it beside the entry script.
    var pageModule: String? = nil
    let page: Content
}

/// The console's navigation for one staff member.
struct ConsoleNav: Encodable, Sendable {
    struct Link: Encodable, Sendable {
        let href: String
        let label: String
        let current: Bool
        /// A count that waits for the person (open alerts); 0 shows none.
        var badge = 0
    }

    let email: String
    let role: String
    let links: [Link]
    /// Shown above every page while high-priority alerts wait for the person; empty when none does.
    var urgent = ""
}

/// One choice in a select or a radio group.
struct SelectOption: Encodable, Sendable {
    let value: String
    let label: String
    let selected: Bool
}

/// A page without content of its own.
struct NoContent: Encodable, Sendable {}

extension Request {
    /// Renders `template` with the page chrome around `content`.
    func renderPage<Content: Encodable & Sendable>(
        _ template: String, titleKey: String, content: Content, language: Language? = nil, csrf: String? = nil,
        nav: ConsoleNav? = nil, script: String? = nil, status: HTTPResponseStatus = .ok
    ) async throws -> Response {
        let language = language ?? self.language
        let localizer = services.localizer
        let page = Page(
            lang: language.rawValue, t: localizer.templateTable(language),
            title: localizer.text(titleKey, language), csrf: csrf, nav: nav, script: script,
            assets: application.publicAssets?.prefix ?? "",
            pageModule: application.publicAssets?.pageModule(of: template),
            page: content)
        let view = try await self.view.render(template, page)
        let response = try await view.encodeResponse(for: self)
        response.status = status
        response.headers.replaceOrAdd(name: .cacheControl, value: "no-store")
        return response
    }
}

/// The friendly page shown for an error outside the API.
enum ErrorPage {
    struct Content: Encodable, Sendable {
        let status: Int
        let message: String
    }

    static func render(_ error: ProblemMiddleware.ClassifiedError, for request: Request) async throws -> Response {
        // Signed in to the console, staff read it in their own language, as every other console page.
        let language = ConsoleSession.get(request)?.user.language ?? request.language
        let localizer = request.services.localizer
        let status = error.status
        let message: String
        switch error {
        case .app(let appError):
            message = localizer.text("problem.\(appError.slug)", language)
        case .http(let status):
            let key = "problem.http-\(status.code)"
            message =
                localizer.has(key) ? localizer.text(key, language) : localizer.text("problem.http-other", language)
        }
        do {
            let response = try await request.renderPage(
                "error", titleKey: "error.title", content: Content(status: Int(status.code), message: message),
                language: language, status: status)
            if case .app(.rateLimited(let seconds)) = error {
                response.headers.replaceOrAdd(name: "Retry-After", value: String(seconds))
            }
            return response
        } catch {
            return Response(status: status, body: .init(string: message))
        }
    }
}

/// Dates and times as a person reads them, in their zone and language.
struct DateDisplay: Sendable {
    let language: Language
    let timeZone: TimeZone

    func dateTime(_ date: Date?) -> String {
        guard let date else { return "" }
        return format(date, date: .medium, time: .short)
    }

    func date(_ date: Date?) -> String {
        guard let date else { return "" }
        return format(date, date: .medium, time: .none)
    }

    /// With the day of the week, for a moment someone is to act on: "Monday, 3 March 2026, 20:00".
    func dayDateTime(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: language == .de ? "de_AT" : "en_GB")
        formatter.timeZone = timeZone
        formatter.setLocalizedDateFormatFromTemplate("EEEEdMMMMyyyyHHmm")
        return formatter.string(from: date)
    }

    /// A deadline as short as it can be said from `start`: the time on the same day ("20:00"), the weekday and time
    /// within the week ("Friday 03:29"), else the date and time ("12 December at 09:00").
    func deadline(_ date: Date, from start: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: language == .de ? "de_AT" : "en_GB")
        formatter.timeZone = timeZone
        let days = LocalDate(start, in: timeZone).days(to: LocalDate(date, in: timeZone))
        let template = days == 0 ? "HHmm" : (1...6).contains(days) ? "EEEEHHmm" : "dMMMMHHmm"
        formatter.setLocalizedDateFormatFromTemplate(template)
        return formatter.string(from: date)
    }

    /// A calendar date (a therapy's start) as the same day, whatever the zone.
    func date(_ day: LocalDate) -> String {
        date(LocalDateTime(date: day, hour: 12, minute: 0)?.instant(in: timeZone))
    }

    private func format(_ value: Date, date: DateFormatter.Style, time: DateFormatter.Style) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: language == .de ? "de_AT" : "en_GB")
        formatter.timeZone = timeZone
        formatter.dateStyle = date
        formatter.timeStyle = time
        return formatter.string(from: value)
    }
}

extension UserRecord {
    var dateDisplay: DateDisplay {
        DateDisplay(language: language, timeZone: TimeZone(identifier: timeZone) ?? .gmt)
    }
}

/// A local path to return to after an action; anything that could lead to another host becomes `fallback`.
func localPath(_ candidate: String?, fallback: String) -> String {
    LocalPath.safe(candidate) ?? fallback
}

/// The address of a list's next page: the cursor, and the filters that made the list, leaving out empty ones.
func nextPageLink(_ path: String, cursor: String, keeping filters: [(name: String, value: String)]) -> String {
    var components = URLComponents()
    components.path = path
    components.queryItems =
        [URLQueryItem(name: "cursor", value: cursor)]
        + filters.filter { !$0.value.isEmpty }.map { URLQueryItem(name: $0.name, value: $0.value) }
    return components.string ?? path
}
