import Fluent
import Foundation
import InterludeCore

/// The instrument pages, built without a request: the catalog the viewer may see with the import form, and one
/// version previewed as patients will see it, with its versions and the pins the viewer may move to it.
struct InstrumentPages: Sendable {
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
        /// What the import just made, and what it left out of the questions and why.
        var imported: [Row] = []
        var notes: [String] = []
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

    let viewer: UserRecord
    let database: any Database
    let services: AppServices

    private var language: Language { viewer.language }
    private var localizer: Localizer { services.localizer }
    private var catalog: InstrumentCatalog { InstrumentCatalog(database: database, services: services) }
    private var governance: InstrumentGovernance { InstrumentGovernance(database: database, services: services) }

    func list(errors: FormErrors, imported: [InstrumentVersionRecord] = [], notes: [ImportNote] = []) async throws
        -> ListContent
    {
        let records = try await governance.visible(try await catalog.overview(), to: viewer)
        let studies = try await governance.studies(for: viewer).map {
            StudyOption(id: $0.id?.uuidString ?? "", title: $0.title)
        }
        let forInstallation = viewer.role == .admin
        return ListContent(
            instruments: rows(records), canManage: forInstallation || !studies.isEmpty,
            studies: studies, forInstallation: forInstallation, errors: errors, imported: rows(imported),
            notes: notes.map { "\($0.place): \(localizer.message(for: $0, language))" })
    }

    /// The questionnaire editor: the definition to start from as JSON, where a save may belong, and what the last
    /// save found wrong.
    struct EditorContent: Encodable, Sendable {
        var definition: String
        var basedOn: String?
        var studies: [StudyOption]
        var forInstallation: Bool
        var selectedStudy: String
        var errors: FormErrors
        /// The editor script's words, in the viewer's language.
        var labels: [Label]
    }

    struct Label: Encodable, Sendable {
        var key: String
        var text: String
    }

    /// The words the editor script asks for (`console.editor.<key>`), besides the item kinds' names.
    static let editorLabelKeys = [
        "addBand", "addClause", "addItem", "addOption", "addScore", "addSection", "bandMax", "bandMin", "bands",
        "clauseItem", "code", "condition", "conditionNone", "decimals", "description", "exclusive", "factor", "help",
        "item", "itemId", "jsonInvalid", "key", "label", "level", "max", "maxLabel", "maxLength", "method",
        "method.mean", "method.sum", "min", "minAnswered", "minLabel", "mode", "mode.all", "mode.any", "moveDown",
        "moveUp", "multiline", "operator", "options", "outro", "patientFeedback", "previewFailed", "previewShown.one",
        "previewShown.other",
        "removeBand", "removeClause", "removeItem", "removeOption", "removeScore", "removeSection", "required",
        "reverse", "score", "scoreId", "scoreItems", "scoreTitle", "scores", "section", "sectionDescription",
        "sectionId", "sectionTitle", "sharedScale", "step", "text", "type", "unit", "usesSectionScale", "value",
        "op.equals", "op.notEquals", "op.greater", "op.less", "op.atLeast", "op.atMost", "op.answered", "nestedGroups",
        "language.en", "language.de",
    ]

    func editor(definition: String, basedOn: String?, selectedStudy: String?, errors: FormErrors) async throws
        -> EditorContent
    {
        let studies = try await governance.studies(for: viewer).map {
            StudyOption(id: $0.id?.uuidString ?? "", title: $0.title)
        }
        guard viewer.role == .admin || !studies.isEmpty else { throw AppError.forbidden(.notAllowed) }
        let labels =
            [Label(key: "title", text: localizer.text("console.editor.field.title", language))]
            + Self.editorLabelKeys.map { Label(key: $0, text: localizer.text("console.editor.\($0)", language)) }
            + ItemType.allCases.map {
                Label(key: "type.\($0.rawValue)", text: localizer.text("itemType.\($0.rawValue)", language))
            }
        return EditorContent(
            definition: definition, basedOn: basedOn, studies: studies, forInstallation: viewer.role == .admin,
            selectedStudy: selectedStudy ?? "", errors: errors, labels: labels)
    }

    func preview(_ record: InstrumentVersionRecord, justImported: Bool) async throws -> PreviewContent {
        let definition = try record.decodedDefinition()
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
                method: localizer.text(
                    "scoreMethod.\(rule.method.rawValue)", language, ["count": String(rule.items.count)]),
                bands: rule.bands.map { "\($0.min.plainText())–\($0.max.plainText()): \($0.label.text(language))" })
        }
        let versions = try await catalog.versions(of: record.key)
        let movable = record.isPublished ? try await movablePins(of: record) : []
        return PreviewContent(
            key: record.key, version: record.version, title: definition.title.text(language),
            description: definition.description?.text(language), source: definition.source,
            licence: definition.licence, isDraft: !record.isPublished,
            canManage: await governance.isSteward(of: record, viewer), sections: sections, scores: scores,
            versions: rows(versions),
            justImported: justImported,
            movablePins: movable, hasMovablePins: !movable.isEmpty)
    }

    private func rows(_ records: [InstrumentVersionRecord]) -> [Row] {
        records.map { record in
            Row(
                key: record.key, version: record.version,
                title: record.title(in: language),
                status: record.status.rawValue,
                statusLabel: localizer.text("instrumentStatus.\(record.status.rawValue)", language),
                origin: localizer.text("instrumentOrigin.\(record.origin.rawValue)", language))
        }
    }

    /// The studies the viewer manages instruments for that pinned another version of `record`'s instrument.
    private func movablePins(of record: InstrumentVersionRecord) async throws
        -> [MovablePin]
    {
        var result: [MovablePin] = []
        for study in try await governance.studies(for: viewer) {
            let studyID = try study.requireID()
            guard record.isUsable(in: studyID), let pin = try await catalog.pin(record.key, in: studyID),
                pin.version != record.version
            else { continue }
            result.append(
                MovablePin(studyID: studyID.uuidString, studyTitle: study.titles.text(language), version: pin.version))
        }
        return result
    }

    private func range(_ item: Item, language: Language) -> String? {
        guard let min = item.min, let max = item.max else { return nil }
        let ends = [item.minLabel?.text(language), item.maxLabel?.text(language)].compactMap { $0 }
        return "\(min.plainText())–\(max.plainText())" + (ends.isEmpty ? "" : " (\(ends.joined(separator: " … ")))")
    }
}
