import Foundation
import InterludeCore
import Vapor

/// The questionnaire editor: a study leader builds or changes a questionnaire in the console, sees it as the app
/// will show it, and saves it as a new draft version, checked like an imported file.
struct ConsoleInstrumentEditorController {
    struct Start: Content {
        var key: String?
        var version: Int?
    }

    struct SaveForm: Content {
        var definition: String
        var study: String?
    }

    /// What a new questionnaire starts from: one empty section.
    static let blank = InstrumentDefinition(
        key: "", version: 1, title: LocalizedText([.en: "", .de: ""]), sections: [Section(id: "section-1", items: [])])

    func register(on routes: any RoutesBuilder) {
        routes.get("instruments", "editor", use: show)
        routes.post("instruments", "editor", use: save)
    }

    func show(_ request: Request) async throws -> Response {
        let user = try request.consoleUser(.therapist, .researcher, .admin)
        let start = try request.query.decode(Start.self)
        var definition = Self.blank
        var basedOn: String?
        if let key = start.key, let version = start.version {
            guard
                let record = try await InstrumentGovernance(database: request.db, services: request.services)
                    .visibleVersion(key, version, to: user)
            else { throw AppError.notFound }
            definition = try record.decodedDefinition()
            basedOn = "\(key) \(version)"
        }
        return try await render(
            request, definition: try InstrumentCatalog.encode(definition, pretty: true), basedOn: basedOn)
    }

    func save(_ request: Request) async throws -> Response {
        let user = try request.consoleUser(.therapist, .researcher, .admin)
        let form = try request.content.decode(SaveForm.self)
        do {
            var studyID: UUID?
            if let study = form.study, !study.isEmpty {
                guard let parsed = UUID(uuidString: study) else { throw AppError.field("study", .invalidFormat) }
                studyID = parsed
            }
            let parsed: InstrumentCatalog.Upload
            do {
                parsed = try InstrumentCatalog.parse(Data(form.definition.utf8), format: .json)
            } catch AppError.malformedRequest {
                throw AppError.field("definition", .invalidFormat)
            }
            let record = try await InstrumentGovernance(database: request.db, services: request.services)
                .importDraft(parsed.definitions[0], format: parsed.format, for: studyID, by: user)
            return request.redirect(
                to: .instrument(key: record.key, version: record.version), query: [("imported", "1")])
        } catch {
            guard let errors = FormErrors.from(error, request: request) else { throw error }
            return try await render(
                request, definition: form.definition, selectedStudy: form.study, errors: errors, status: errors.status)
        }
    }

    private func render(
        _ request: Request, definition: String, basedOn: String? = nil, selectedStudy: String? = nil,
        errors: FormErrors = FormErrors(), status: HTTPResponseStatus = .ok
    ) async throws -> Response {
        let user = try request.consoleUser(.therapist, .researcher, .admin)
        let content = try await InstrumentPages(viewer: user, database: request.db, services: request.services)
            .editor(definition: definition, basedOn: basedOn, selectedStudy: selectedStudy, errors: errors)
        return try await request.renderConsole(
            "console/instrument-editor", titleKey: "console.editor.title", content: content,
            script: "/js/console/instrument-editor.js", status: status)
    }
}
