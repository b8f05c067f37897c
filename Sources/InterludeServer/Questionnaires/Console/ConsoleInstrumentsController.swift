import Foundation
import InterludeCore
import Vapor

/// The researcher's instrument catalog: import a file, preview it as patients will see it, publish it.
struct ConsoleInstrumentsController {
    struct ImportForm: Content {
        var file: File
        var study: String?
        var key: String?
        var forms: String?
    }

    func register(on routes: any RoutesBuilder) {
        routes.get("instruments", use: list)
        routes.post("instruments", use: upload)
        routes.get("instruments", ":key", ":version", use: preview)
        routes.post("instruments", ":key", ":version", "publication", use: publish)
        routes.get("instruments", ":key", ":version", "fhir", use: fhir)
        routes.post("instruments", ":key", ":version", "pin", use: movePin)
    }

    private func catalog(_ request: Request) -> InstrumentCatalog {
        InstrumentCatalog(database: request.db, services: request.services)
    }

    private func governance(_ request: Request) -> InstrumentGovernance {
        InstrumentGovernance(database: request.db, services: request.services)
    }

    private func renderList(
        _ request: Request, errors: FormErrors = FormErrors(), status: HTTPResponseStatus = .ok,
        imported: [InstrumentVersionRecord] = [], notes: [ImportNote] = []
    ) async throws -> Response {
        let user = try request.consoleUser(.therapist, .researcher, .admin)
        let content = try await pages(request, user).list(errors: errors, imported: imported, notes: notes)
        return try await request.renderConsole(
            "console/instruments", titleKey: "console.instruments.title", content: content,
            status: status)
    }

    func list(_ request: Request) async throws -> Response {
        try await renderList(request)
    }

    /// Imports an uploaded file (JSON, FHIR or REDCap CSV, told apart by content) as drafts: one instrument opens
    /// its preview; several (a REDCap dictionary's forms), or any left out of the questions, are listed with the
    /// catalog.
    func upload(_ request: Request) async throws -> Response {
        let user = try request.consoleUser(.therapist, .researcher, .admin)
        do {
            let form = try request.content.decode(ImportForm.self)
            let data = Data(buffer: form.file.data)
            guard !data.isEmpty else { throw AppError.field("file", .required) }
            var studyID: UUID?
            if let study = form.study, !study.isEmpty {
                guard let parsed = UUID(uuidString: study) else { throw AppError.field("study", .invalidFormat) }
                studyID = parsed
            }
            let choice = try InstrumentCatalog.Choice(forms: form.forms, key: form.key)
            let instruments = governance(request)
            try await instruments.requireImporter(for: studyID, by: user)
            let upload = try await InstrumentCatalog.parseUpload(
                data, format: nil, choice: choice, on: request.application.threadPool)
            let records = try await instruments.importUpload(upload, for: studyID, publish: false, by: user)
            if records.count == 1, upload.notes.isEmpty, let record = records.first {
                return request.redirect(
                    to: .instrument(key: record.key, version: record.version), query: [("imported", "1")])
            }
            return try await renderList(request, imported: records, notes: upload.notes)
        } catch {
            guard let errors = FormErrors.from(error, request: request) else { throw error }
            return try await renderList(request, errors: errors, status: errors.status)
        }
    }

    private func record(_ request: Request) async throws -> InstrumentVersionRecord {
        let user = try request.consoleUser(.therapist, .researcher, .admin)
        guard let key = request.parameters.get("key"), let version = request.parameters.get("version", as: Int.self),
            let record = try await governance(request).visibleVersion(key, version, to: user)
        else { throw AppError.notFound }
        return record
    }

    func preview(_ request: Request) async throws -> Response {
        let user = try request.consoleUser(.therapist, .researcher, .admin)
        let record = try await record(request)
        let content = try await pages(request, user)
            .preview(record, justImported: request.query[String.self, at: "imported"] != nil)
        return try await request.renderConsole(
            "console/instrument", titleKey: "console.instrument.title", content: content)
    }

    private func pages(_ request: Request, _ user: UserRecord) -> InstrumentPages {
        InstrumentPages(viewer: user, database: request.db, services: request.services)
    }

    /// Moves one of the user's studies to the version shown.
    func movePin(_ request: Request) async throws -> Response {
        let user = try request.consoleUser(.therapist, .researcher, .admin)
        let record = try await record(request)
        guard let studyID = UUID(uuidString: try request.content.get(String.self, at: "study")) else {
            throw AppError.field("study", .invalidFormat)
        }
        _ = try await governance(request).movePin(record.key, to: record.version, in: studyID, by: user)
        return request.redirect(to: .instrument(key: record.key, version: record.version))
    }

    func publish(_ request: Request) async throws -> Response {
        let user = try request.consoleUser(.therapist, .researcher, .admin)
        let record = try await record(request)
        _ = try await governance(request).publish(record.key, record.version, by: user)
        return request.redirect(to: .instrument(key: record.key, version: record.version))
    }

    /// The version as a FHIR R4 Questionnaire file.
    func fhir(_ request: Request) async throws -> Response {
        _ = try request.consoleUser(.therapist, .researcher, .admin)
        let record = try await record(request)
        let definition = try record.decodedDefinition()
        return try FHIRDownload.response(
            definition.fhirQuestionnaire(canonicalURL: request.services.settings.questionnaireURL(definition.key)),
            filename: "Questionnaire-\(record.key)-\(record.version).json")
    }
}

/// A visibility condition in words: "shown when 'Did you …' is Yes".
struct ConditionDescription: Sendable {
    let definition: InstrumentDefinition
    let language: Language
    let localizer: Localizer

    func text(_ condition: Condition) -> String {
        localizer.text("condition.shownWhen", language, ["clauses": clauses(condition)])
    }

    /// The clauses joined by "and" or "or", nested groups in parentheses.
    private func clauses(_ condition: Condition) -> String {
        var parts = condition.clauses.map { clause -> String in
            let item = definition.item(clause.item)
            let question = "„\(item?.text.text(language) ?? clause.item)“"
            let value = clause.value.map { describe($0, item: item) } ?? ""
            return localizer.text(
                "condition.\(clause.operator.rawValue)\(clause.operator == .answered && clause.value == .bool(false) ? ".not" : "")",
                language, ["item": question, "value": value])
        }
        parts += condition.groups.map { "(" + clauses($0) + ")" }
        let joiner = localizer.text(condition.mode == .all ? "condition.and" : "condition.or", language)
        return parts.joined(separator: " \(joiner) ")
    }

    private func describe(_ value: AnswerValue, item: Item?) -> String {
        switch value {
        case .bool(let flag): return localizer.text(flag ? "common.yes" : "common.no", language)
        case .number(let number): return number.plainText()
        case .text(let code):
            if let item, let option = definition.options(of: item).first(where: { $0.code == code }) {
                return option.label.text(language)
            }
            return code
        case .list(let codes): return codes.joined(separator: ", ")
        }
    }
}
