import Fluent
import Foundation
import InterludeCore

/// The export page of a study: start an export, follow its progress, download it; and the viewer's access tokens
/// for scripts that fetch this study's exports.
struct ExportPages {
    struct ExportsContent: Encodable, Sendable {
        var studyTitle: String
        var studyLink: String
        var startAction: String
        var tokenAction: String
        var exports: [ExportRow]
        var hasExports: Bool
        var pending: Bool
        var tokens: [TokenRow]
        var hasTokens: Bool
        /// A token just made, shown this once.
        var newToken: String?
        var since: String
        var tokenName: String
        var errors: FormErrors
    }

    struct ExportRow: Encodable, Sendable {
        var id: String
        var created: String
        var filter: String
        var status: String
        var progress: Int
        var pending: Bool
        var counts: String
        var error: String?
        var downloadLink: String?
        var expires: String
    }

    struct TokenRow: Encodable, Sendable {
        var name: String
        var expires: String
        var lastUsed: String
        var revokeAction: String
    }

    let viewer: UserRecord
    let database: any Database
    let services: AppServices

    private var language: Language { viewer.language }

    func page(
        _ scope: StudyExportScope, newToken: String? = nil, since: String = "", tokenName: String = "",
        errors: FormErrors = FormErrors()
    ) async throws -> ExportsContent {
        let grant = scope.grant
        let display = DateDisplay(language: language, timeZone: TimeZone(identifier: viewer.timeZone) ?? .gmt)
        let localizer = services.localizer
        let exports = try await ExportService(database: database, services: services).history(of: scope).map { export in
            ExportRow(
                id: export.id!.uuidString, created: display.dateTime(export.createdAt),
                filter: export.since.map {
                    localizer.text("console.exports.since", language) + " " + display.dateTime($0)
                }
                    ?? localizer.text("console.exports.everything", language),
                status: localizer.text("exportStatus.\(export.status.rawValue)", language), progress: export.progress,
                pending: export.status.isPending,
                counts: export.status == .ready
                    ? "\(export.participants) · \(export.prompts) · \(export.responses)" : "",
                error: export.error,
                downloadLink: export.status == .ready
                    ? ConsoleURL.exportFile(study: grant.studyID, export: export.id!).path : nil,
                expires: display.dateTime(export.expiresAt))
        }
        let tokens = try await AccessTokenService(database: database, services: services).tokens(of: viewer)
            .filter { $0.studies.contains(grant.studyID) }
            .map { token in
                TokenRow(
                    name: token.name, expires: display.dateTime(token.expiresAt),
                    lastUsed: display.dateTime(token.lastUsedAt),
                    revokeAction: ConsoleURL.revokeExportToken(study: grant.studyID, token: token.id!).path)
            }
        return ExportsContent(
            studyTitle: grant.study.titles.text(language), studyLink: ConsoleURL.study(grant.studyID).path,
            startAction: ConsoleURL.exports(study: grant.studyID).path,
            tokenAction: ConsoleURL.exportTokens(study: grant.studyID).path,
            exports: exports, hasExports: !exports.isEmpty, pending: exports.contains(where: \.pending), tokens: tokens,
            hasTokens: !tokens.isEmpty, newToken: newToken, since: since,
            tokenName: tokenName, errors: errors)
    }
}
