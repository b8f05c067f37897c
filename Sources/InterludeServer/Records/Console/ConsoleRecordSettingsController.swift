import Foundation
import InterludeCore
import Vapor

/// Which health records a study or practice collects, and the event types it adds: shown to its staff,
/// changed by its owner (a practice's therapist) or an administrator.
struct ConsoleRecordSettingsController {
    struct SettingsForm: Content {
        var collects: [String]?
        var eventTypes: String?
    }

    struct KindChoice: Encodable, Sendable {
        let kind: String
        let label: String
        let checked: Bool
    }

    struct SettingsPage: Encodable, Sendable {
        let studyID: String
        let title: String
        let action: String
        let studyLink: String
        let kinds: [KindChoice]
        let eventTypes: String
        let canEdit: Bool
        let saved: Bool
        let errors: FormErrors
    }

    func register(on routes: any RoutesBuilder) {
        routes.get("records", use: practiceSettings)
        routes.get("studies", ":studyID", "records", use: show)
        routes.post("studies", ":studyID", "records", use: submit)
    }

    /// A therapist's settings are their practice's.
    func practiceSettings(_ request: Request) async throws -> Response {
        let therapist = try request.consoleUser(.therapist)
        let practice = try await PairingService(database: request.db, services: request.services).practice(of: therapist.requireID())
        return request.redirect(to: .recordSettings(study: try practice.requireID()))
    }

    func show(_ request: Request) async throws -> Response {
        let staff = try request.consoleUser(.therapist, .researcher, .admin)
        let grant = try await ConsoleRulesController.grant(.viewStudy, request, staff)
        let settings = try StudyService(database: request.db, services: request.services).recordSettings(in: grant)
        return try await render(request, grant, collects: settings.orderedKinds.map(\.rawValue), eventTypes: settings.eventTypes,
            saved: (try? request.query.get(String.self, at: "saved")) != nil)
    }

    func submit(_ request: Request) async throws -> Response {
        let staff = try request.consoleUser(.therapist, .researcher, .admin)
        let grant = try await ConsoleRulesController.grant(.configureRecords, request, staff)
        let form = try request.content.decode(SettingsForm.self)
        let lines = (form.eventTypes ?? "").split(whereSeparator: \.isNewline).map(String.init)
            .filter { !$0.trimmingCharacters(in: .whitespaces).isEmpty }
        do {
            let settings = try RecordSettings.validate(collects: form.collects ?? [], eventTypes: lines)
            _ = try await StudyService(database: request.db, services: request.services).setRecordSettings(settings, in: grant)
            return request.redirect(to: .recordSettings(study: grant.studyID), query: [("saved", "1")])
        } catch {
            guard let errors = FormErrors.from(error, request: request) else { throw error }
            return try await render(request, grant, collects: form.collects ?? [], eventTypes: lines, errors: errors)
        }
    }

    private func render(
        _ request: Request, _ grant: StudyGrant, collects: [String], eventTypes: [String], saved: Bool = false,
        errors: FormErrors = FormErrors()
    ) async throws -> Response {
        let language = try request.consoleUser().language
        let localizer = request.services.localizer
        let page = SettingsPage(
            studyID: grant.studyID.uuidString.lowercased(), title: grant.study.title,
            action: ConsoleURL.recordSettings(study: grant.studyID).path, studyLink: ConsoleURL.study(grant.studyID).path,
            kinds: RecordKind.allCases.map {
                KindChoice(kind: $0.rawValue, label: localizer.text("records.kind.\($0.rawValue)", language), checked: collects.contains($0.rawValue))
            },
            eventTypes: eventTypes.joined(separator: "\n"), canEdit: grant.allows(.configureRecords), saved: saved,
            errors: FormErrors(fields: errors.fields.reduce(into: [:]) { $0[$1.key.hasPrefix("eventTypes") ? "eventTypes" : $1.key] = $1.value }, form: errors.form))
        return try await request.renderConsole(
            "console/record-settings", titleKey: "console.recordSettings.title", content: page, status: errors.isEmpty ? .ok : errors.status)
    }
}
