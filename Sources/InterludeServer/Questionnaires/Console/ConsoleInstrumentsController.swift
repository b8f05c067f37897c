import Foundation
import InterludeCore
import Vapor

/// The researcher's instrument catalog: import a file, preview it as patients will see it, publish it.
struct ConsoleInstrumentsController {
    struct Row: Encodable, Sendable {
        var key: String
        var version: Int
        var title: String
        var status: String
        var statusLabel: String
        var origin: String
    }

    struct StudyOption: Encodable, Sendable {
        var id: String
        var title: String
    }

    struct ListContent: Encodable, Sendable {
        var instruments: [Row]
        /// Staff who manage instruments somewhere import; everyone else reads the instruments they assign.
        var canManage: Bool
        /// Where an import may belong: the studies and practices the person manages instruments for.
        var studies: [StudyOption]
        /// An administrator may import for the whole installation.
        var forInstallation: Bool
        var errors: FormErrors
    }

    struct ImportForm: Content {
        var file: File
        var study: String?
    }

    struct PreviewContent: Encodable, Sendable {
        var key: String
        var version: Int
        var title: String
        var description: String?
        var source: String?
        var licence: String?
        var isDraft: Bool
        var canManage: Bool
        var sections: [PreviewSection]
        var scores: [PreviewScore]
        var versions: [Row]
        var justImported: Bool
        /// The user's studies that use another version of this instrument, which they may move to this one.
        var movablePins: [MovablePin]
        var hasMovablePins: Bool
    }

    struct MovablePin: Encodable, Sendable {
        var studyID: String
        var studyTitle: String
        var version: Int
    }

    struct PreviewSection: Encodable, Sendable {
        var title: String?
        var description: String?
        var condition: String?
        var items: [PreviewItem]
    }

    struct PreviewItem: Encodable, Sendable {
        var id: String
        var text: String
        var help: String?
        var kind: String
        var required: Bool
        var options: [String]
        var range: String?
        var condition: String?
    }

    struct PreviewScore: Encodable, Sendable {
        var title: String
        var method: String
        var bands: [String]
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
        InstrumentCatalog(database: request.db, now: request.services.clock.now)
    }

    private func governance(_ request: Request) -> InstrumentGovernance {
        InstrumentGovernance(database: request.db, now: request.services.clock.now)
    }

    private func rows(_ records: [InstrumentVersionRecord], user: UserRecord, request: Request) -> [Row] {
        let localizer = request.services.localizer
        return records.map { record in
            Row(
                key: record.key, version: record.version,
                title: record.title(in: user.language),
                status: record.status.rawValue, statusLabel: localizer.text("instrumentStatus.\(record.status.rawValue)", user.language),
                origin: localizer.text("instrumentOrigin.\(record.origin)", user.language))
        }
    }

    private func renderList(_ request: Request, errors: FormErrors = FormErrors(), status: HTTPResponseStatus = .ok)
        async throws -> Response
    {
        let user = try request.consoleUser(.therapist, .researcher, .admin)
        let records = try await governance(request).visible(try await catalog(request).overview(), to: user)
        let studies = try await governance(request).studies(for: user).map { StudyOption(id: $0.id?.uuidString ?? "", title: $0.title) }
        let forInstallation = user.role == .admin
        return try await request.renderConsole(
            "console/instruments", titleKey: "console.instruments.title",
            content: ListContent(
                instruments: rows(records, user: user, request: request), canManage: forInstallation || !studies.isEmpty,
                studies: studies, forInstallation: forInstallation, errors: errors),
            status: status)
    }

    func list(_ request: Request) async throws -> Response {
        try await renderList(request)
    }

    /// Imports an uploaded file (JSON, FHIR or REDCap CSV, told apart by content) as a draft.
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
            let (definition, format) = try InstrumentCatalog.parse(data, format: nil)
            let record = try await governance(request).importDraft(definition, format: format, for: studyID, by: user)
            return request.redirect(to: .instrument(key: record.key, version: record.version), query: [("imported", "1")])
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
        let definition = try record.decodedDefinition()
        let language = user.language
        let localizer = request.services.localizer
        let describe = ConditionDescription(definition: definition, language: language, localizer: localizer)
        let sections = definition.sections.map { section in
            PreviewSection(
                title: section.title?.text(language), description: section.description?.text(language),
                condition: section.visibleWhen.map(describe.text),
                items: section.items.map { item in
                    PreviewItem(
                        id: item.id, text: item.text.text(language), help: item.help?.text(language),
                        kind: localizer.text("itemType.\(item.type.rawValue)", language),
                        required: item.required,
                        options: definition.options(of: item).map { option in
                            option.label.text(language) + (option.numericValue.map { " (\($0.plainText()))" } ?? "")
                        },
                        range: range(item, language: language), condition: item.visibleWhen.map(describe.text))
                })
        }
        let scores = definition.scores.map { rule in
            PreviewScore(
                title: rule.title.text(language),
                method: localizer.text("scoreMethod.\(rule.method.rawValue)", language, ["count": String(rule.items.count)]),
                bands: rule.bands.map { "\($0.min.plainText())–\($0.max.plainText()): \($0.label.text(language))" })
        }
        let versions = try await catalog(request).versions(of: record.key)
        let movable = record.isPublished ? try await movablePins(of: record, for: user, request) : []
        return try await request.renderConsole(
            "console/instrument", titleKey: "console.instrument.title",
            content: PreviewContent(
                key: record.key, version: record.version, title: definition.title.text(language),
                description: definition.description?.text(language), source: definition.source,
                licence: definition.licence, isDraft: !record.isPublished, canManage: await governance(request).isSteward(of: record, user), sections: sections, scores: scores,
                versions: rows(versions, user: user, request: request),
                justImported: (try? request.query.get(String.self, at: "imported")) != nil,
                movablePins: movable, hasMovablePins: !movable.isEmpty))
    }

    /// The studies `user` manages instruments for that pinned another version of `record`'s instrument.
    private func movablePins(of record: InstrumentVersionRecord, for user: UserRecord, _ request: Request) async throws
        -> [MovablePin]
    {
        var result: [MovablePin] = []
        for study in try await governance(request).studies(for: user) {
            let studyID = try study.requireID()
            guard record.isUsable(in: studyID), let pin = try await catalog(request).pin(record.key, in: studyID),
                pin.version != record.version
            else { continue }
            result.append(MovablePin(studyID: studyID.uuidString, studyTitle: study.title, version: pin.version))
        }
        return result
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

    private func range(_ item: Item, language: Language) -> String? {
        guard let min = item.min, let max = item.max else { return nil }
        let ends = [item.minLabel?.text(language), item.maxLabel?.text(language)].compactMap { $0 }
        return "\(min.plainText())–\(max.plainText())" + (ends.isEmpty ? "" : " (\(ends.joined(separator: " … ")))")
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
        let parts = condition.clauses.map { clause -> String in
            let item = definition.item(clause.item)
            let question = "„\(item?.text.text(language) ?? clause.item)“"
            let value = clause.value.map { describe($0, item: item) } ?? ""
            return localizer.text(
                "condition.\(clause.operator.rawValue)\(clause.operator == .answered && clause.value == .bool(false) ? ".not" : "")",
                language, ["item": question, "value": value])
        }
        let joiner = localizer.text(condition.mode == .all ? "condition.and" : "condition.or", language)
        return localizer.text("condition.shownWhen", language, ["clauses": parts.joined(separator: " \(joiner) ")])
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
