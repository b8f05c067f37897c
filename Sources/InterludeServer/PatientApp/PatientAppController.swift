import Foundation
import InterludeCore
import Vapor

/// The patient app's pages. Each is a server-rendered shell in the person's language; the app's script talks
/// to the API with the person's bearer token, so the pages work the same for every account.
struct PatientAppController {
    struct RegisterContent: Encodable, Sendable {
        var privacyPolicyVersion: String
        var languages: [SelectOption]
    }

    struct InvitationContent: Encodable, Sendable {
        var privacyPolicyVersion: String
        var languages: [SelectOption]
        var genders: [SelectOption]
    }

    struct GenderContent: Encodable, Sendable {
        var genders: [SelectOption]
        var languages: [SelectOption]
    }

    struct TextContent: Encodable, Sendable {
        var paragraphs: [String]
        var version: String?
    }

    /// Pages that need nothing but their template.
    static let simplePages: [(path: String, template: String, titleKey: String)] = [
        ("login", "app/login", "app.login.title"),
        ("verify", "app/verify", "app.verify.title"),
        ("verify-pending", "app/verify-pending", "app.verifyPending.title"),
        ("forgot-password", "app/forgot-password", "app.forgotPassword.title"),
        ("reset-password", "app/reset-password", "app.resetPassword.title"),
        ("therapist", "app/therapist", "app.therapist.title"),
        ("studies", "app/studies", "app.studies.title"),
        ("questionnaires", "app/questionnaires", "app.questionnaires.title"),
        ("appointments", "app/appointments", "app.appointments.title"),
        ("events", "app/events", "app.events.title"),
        ("therapies", "app/therapies", "app.therapies.title"),
        ("audiograms", "app/audiograms", "app.audiograms.title"),
        ("moods", "app/moods", "app.moods.title"),
        ("thoughts", "app/thoughts", "app.thoughts.title"),
        ("health-data", "app/health-data", "app.healthData.title"),
        ("schedule", "app/schedule", "app.schedule.title"),
        ("results", "app/results", "app.results.title"),
        ("interventions", "app/interventions", "app.interventions.title"),
        ("access-log", "app/access-log", "app.accessLog.title"),
        ("consents", "app/consents", "app.consents.title"),
        ("my-data", "app/my-data", "app.myData.title"),
        ("preview", "app/preview", "app.preview.title"),
    ]

    static let script = "/js/app.js"

    func register(on web: any RoutesBuilder) {
        let routes = web.grouped("app")
        routes.get(use: home)
        for page in Self.simplePages {
            routes.get(PathComponent(stringLiteral: page.path)) { request in
                try await request.renderPage(
                    page.template, titleKey: page.titleKey, content: NoContent(), script: Self.script)
            }
        }
        routes.get("questionnaires", ":promptID") { request in
            try await request.renderPage(
                "app/questionnaire", titleKey: "app.questionnaire.title", content: NoContent(), script: Self.script)
        }
        routes.get("interventions", ":interventionID") { request in
            try await request.renderPage(
                "app/intervention", titleKey: "app.interventions.title", content: NoContent(), script: Self.script)
        }
        ACTPages().register(on: routes)
        routes.get("register", use: register)
        routes.get("invitation", use: invitation)
        routes.get("profile", use: profile)
        routes.get("pairing", use: pairing)
        routes.get("privacy", use: privacy)
        routes.get("imprint", use: imprint)
        routes.get("manifest.webmanifest", use: manifest)
        routes.get("sw.js", use: serviceWorker)
        web.get("language", use: chooseLanguage)
    }

    func home(_ request: Request) async throws -> Response {
        try await request.renderPage("app/home", titleKey: "app.home.title", content: NoContent(), script: Self.script)
    }

    private func languages(_ request: Request) -> [SelectOption] {
        let current = request.language
        return Language.allCases.map {
            SelectOption(
                value: $0.rawValue, label: request.services.localizer.text("language.\($0.rawValue)", current),
                selected: $0 == current)
        }
    }

    private func genders(_ request: Request) -> [SelectOption] {
        Gender.allCases.map {
            SelectOption(
                value: $0.rawValue, label: request.services.localizer.text("gender.\($0.rawValue)", request.language),
                selected: false)
        }
    }

    func register(_ request: Request) async throws -> Response {
        let version = try await SiteTexts(database: request.db).privacyPolicyVersion()
        return try await request.renderPage(
            "app/register", titleKey: "app.register.title",
            content: RegisterContent(
                privacyPolicyVersion: version, languages: languages(request)),
            script: Self.script)
    }

    /// Taking up a therapist's invitation: the account's password and choices, and what pairing asks.
    func invitation(_ request: Request) async throws -> Response {
        let version = try await SiteTexts(database: request.db).privacyPolicyVersion()
        return try await request.renderPage(
            "app/invitation", titleKey: "app.invitation.title",
            content: InvitationContent(
                privacyPolicyVersion: version, languages: languages(request), genders: genders(request)),
            script: Self.script)
    }

    func profile(_ request: Request) async throws -> Response {
        try await request.renderPage(
            "app/profile", titleKey: "app.profile.title",
            content: GenderContent(genders: genders(request), languages: languages(request)), script: Self.script)
    }

    func pairing(_ request: Request) async throws -> Response {
        try await request.renderPage(
            "app/pairing", titleKey: "app.pairing.title",
            content: GenderContent(genders: genders(request), languages: languages(request)), script: Self.script)
    }

    func privacy(_ request: Request) async throws -> Response {
        let texts = SiteTexts(database: request.db)
        let text = try await texts.text(.privacyPolicy, request.language, localizer: request.services.localizer)
        return try await request.renderPage(
            "app/text", titleKey: "app.privacy.title",
            content: TextContent(paragraphs: Self.paragraphs(text), version: try await texts.privacyPolicyVersion()),
            script: Self.script)
    }

    func imprint(_ request: Request) async throws -> Response {
        let text = try await SiteTexts(database: request.db)
            .text(.imprint, request.language, localizer: request.services.localizer)
        return try await request.renderPage(
            "app/text", titleKey: "app.imprint.title", content: TextContent(paragraphs: Self.paragraphs(text)),
            script: Self.script)
    }

    /// The service worker, allowed to control `/app` itself as well as the pages below it, and never taken from
    /// a cache, so a new version reaches every phone. It keeps this release's styles and scripts: its `ASSETS`
    /// line is given their versioned address.
    func serviceWorker(_ request: Request) async throws -> Response {
        let path = request.application.directory.resourcesDirectory + "App/service-worker.js"
        guard let source = FileManager.default.contents(atPath: path) else { throw Abort(.notFound) }
        let script = String(decoding: source, as: UTF8.self).replacingOccurrences(
            of: #"const ASSETS = "";"#, with: #"const ASSETS = "\#(request.application.publicAssets?.prefix ?? "")";"#)
        var headers = HTTPHeaders()
        headers.contentType = HTTPMediaType(type: "text", subType: "javascript", parameters: ["charset": "utf-8"])
        headers.replaceOrAdd(name: "Service-Worker-Allowed", value: "/app")
        headers.replaceOrAdd(name: .cacheControl, value: "no-cache")
        return Response(status: .ok, headers: headers, body: .init(string: script))
    }

    /// The web app manifest that makes the patient app installable, in the person's language.
    func manifest(_ request: Request) async throws -> Response {
        let manifest = WebAppManifest(
            name: "Interlude", shortName: "Interlude",
            description: request.services.localizer.text("app.manifest.description", request.language),
            lang: request.language.rawValue, startURL: "/app", scope: "/app", display: "standalone",
            backgroundColor: "#f3f5f7", themeColor: "#1f5f8b",
            icons: [
                .init(src: "/icons/icon-192.png", sizes: "192x192", type: "image/png", purpose: "any"),
                .init(src: "/icons/icon-512.png", sizes: "512x512", type: "image/png", purpose: "any"),
                .init(src: "/icons/icon-maskable-512.png", sizes: "512x512", type: "image/png", purpose: "maskable"),
                .init(src: "/icons/icon.svg", sizes: "any", type: "image/svg+xml", purpose: "any"),
            ])
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var headers = HTTPHeaders()
        headers.contentType = HTTPMediaType(
            type: "application", subType: "manifest+json", parameters: ["charset": "utf-8"])
        return Response(status: .ok, headers: headers, body: .init(data: try encoder.encode(manifest)))
    }

    /// Sets the language cookie and returns to the page the person came from.
    func chooseLanguage(_ request: Request) async throws -> Response {
        guard let chosen = (try? request.query.get(String.self, at: "set")).flatMap(Language.init(rawValue:)) else {
            throw AppError.field("set", .invalidValue)
        }
        let response = request.redirect(
            to: localPath(try? request.query.get(String.self, at: "next"), fallback: "/app"))
        response.cookies["lang"] = HTTPCookies.Value(
            string: chosen.rawValue, maxAge: 365 * 24 * 3600, path: "/",
            isSecure: request.services.settings.secureCookies, isHTTPOnly: false, sameSite: .lax)
        return response
    }

    /// Plain text split at blank lines, so an operator's text needs no markup.
    static func paragraphs(_ text: String) -> [String] {
        text.replacingOccurrences(of: "\r\n", with: "\n")
            .components(separatedBy: "\n\n")
            .map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
            .filter { !$0.isEmpty }
    }
}

/// The fields of a web app manifest Interlude fills.
struct WebAppManifest: Encodable {
    struct Icon: Encodable {
        var src: String
        var sizes: String
        var type: String
        var purpose: String
    }

    var name: String
    var shortName: String
    var description: String
    var lang: String
    var startURL: String
    var scope: String
    var display: String
    var backgroundColor: String
    var themeColor: String
    var icons: [Icon]

    enum CodingKeys: String, CodingKey {
        case name, shortName, description, lang, scope, display, backgroundColor, themeColor, icons
        case startURL = "startUrl"
    }
}
