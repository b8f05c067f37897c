import InterludeCore
import Vapor

/// `/`: what this installation is and the two ways in, for patients and for staff, in German and English.
struct FrontDoor {
    struct Content: Encodable, Sendable {
        let name: String?
        /// The other language, offered as a link.
        let otherLanguage: String
        let otherLanguageLabel: String
    }

    static func render(_ request: Request) async throws -> Response {
        let chosen = (try? request.query.get(String.self, at: "lang")).flatMap(Language.init(rawValue:))
        let language = chosen ?? request.language
        let other: Language = language == .de ? .en : .de
        let name = try await SiteTexts(database: request.db).installationName().flatMap { $0.isEmpty ? nil : $0 }
        return try await request.renderPage(
            "front-door", titleKey: "front.title",
            content: Content(
                name: name, otherLanguage: other.rawValue,
                otherLanguageLabel: request.services.localizer.text("front.language.\(other.rawValue)", other)),
            language: language)
    }
}
