import Foundation

/// What the variables of an export mean: one form per instrument version, named `<key>_v<version>`, its items as
/// variables with stable, sanitised names, then its scores and their bands. The same names head the columns of
/// the form's wide file and the rows of the REDCap data dictionary, so the two fit together. A name two forms
/// would share is prefixed with the later form's name, as REDCap wants every variable of a project unique.
public struct Codebook: Sendable {
    public struct Form: Sendable {
        public let name: String
        public let definition: InstrumentDefinition
        public let variables: [Variable]
        /// Each item's variable name; a multiple-choice item's is the stem of its option columns.
        public let itemNames: [String: String]
    }

    public struct Variable: Sendable, Equatable {
        public enum Source: Sendable, Equatable {
            case item(String)
            /// One option of a multiple-choice item: 1 when chosen, 0 when not.
            case option(item: String, code: String)
            /// A multiple choice's answer in the person's own words, where the item takes one.
            case other(item: String)
            case score(String)
            case band(String)
        }

        public let name: String
        public let source: Source
    }

    public let forms: [Form]

    /// The first variable of the dictionary, naming the participant as REDCap's record id does.
    public static let recordID = "record_id"

    public init(_ definitions: [InstrumentDefinition]) {
        var taken: Set<String> = [Self.recordID]
        var forms: [Form] = []
        for definition in definitions.sorted(by: { ($0.key, $0.version) < ($1.key, $1.version) }) {
            let form = ExportColumn.name("\(definition.key)_v\(definition.version)")
            var variables: [Variable] = []
            var itemNames: [String: String] = [:]
            func claim(_ base: String) -> String {
                var name = base
                if taken.contains(name) { name = ExportColumn.name(form + "_" + base) }
                taken.insert(name)
                return name
            }
            for item in definition.items where item.type.takesAnswer {
                if item.type == .multiple {
                    let base = claim(ExportColumn.name(item.id))
                    itemNames[item.id] = base
                    for option in definition.options(of: item) {
                        let column = ExportColumn.option(base, option.code)
                        taken.insert(column)
                        variables.append(Variable(name: column, source: .option(item: item.id, code: option.code)))
                    }
                    if item.allowsOther {
                        let column = claim(base + "_other")
                        variables.append(Variable(name: column, source: .other(item: item.id)))
                    }
                } else {
                    let name = claim(ExportColumn.name(item.id))
                    itemNames[item.id] = name
                    variables.append(Variable(name: name, source: .item(item.id)))
                }
            }
            for rule in definition.scores {
                variables.append(Variable(name: claim(ExportColumn.name("score_" + rule.id)), source: .score(rule.id)))
                if !rule.bands.isEmpty {
                    variables.append(
                        Variable(name: claim(ExportColumn.name("score_" + rule.id + "_band")), source: .band(rule.id)))
                }
            }
            forms.append(Form(name: form, definition: definition, variables: variables, itemNames: itemNames))
        }
        self.forms = forms
    }

    public func form(key: String, version: Int) -> Form? {
        forms.first { $0.definition.key == key && $0.definition.version == version }
    }
}

extension Codebook.Form {
    /// The wide row's values for one response, in the order of `variables`.
    public func values(answers: Answers, scores: [ScoreResult]) -> [String?] {
        variables.map { variable in
            switch variable.source {
            case .item(let id):
                guard let item = definition.item(id), let answer = answers[id] else { return nil }
                return ExportValue.raw(answer, for: item)
            case .option(let id, let code):
                guard case .list(let codes)? = answers[id] else { return nil }
                return codes.contains(code) ? "1" : "0"
            case .other(let id):
                guard case .list(let codes)? = answers[id], let item = definition.item(id) else { return nil }
                let offered = Set(definition.options(of: item).map(\.code))
                return codes.first { !offered.contains($0) }
            case .score(let id):
                return scores.first { $0.id == id }?.value.map(CSV.number)
            case .band(let id):
                return scores.first { $0.id == id }?.band.map(ExportValue.band)
            }
        }
    }
}

/// An answer as the export files write it.
public enum ExportValue {
    /// The answer itself: an option code, a number with a dot, 1/0 for yes/no (as REDCap's yesno), the text of a
    /// date or time or free text; the codes of a multiple choice joined by `|`.
    public static func raw(_ answer: AnswerValue, for item: Item) -> String {
        switch answer {
        case .bool(let value): value ? "1" : "0"
        case .number(let value): CSV.number(value)
        case .text(let value): value
        case .list(let codes): codes.joined(separator: "|")
        }
    }

    /// What the answer says in words: an option's label (English, else the first language), labels joined by
    /// ` | ` for a multiple choice; nil when the answer is its own label.
    public static func label(_ answer: AnswerValue, for item: Item, in definition: InstrumentDefinition) -> String? {
        let options = definition.options(of: item)
        switch (item.type, answer) {
        case (.single, .text(let code)):
            return options.first { $0.code == code }.map { $0.label.text(.en) }
        case (.multiple, .list(let codes)):
            return options.filter { codes.contains($0.code) }.map { $0.label.text(.en) }.joined(separator: " | ")
        case (.boolean, .bool(let value)):
            return value ? "yes" : "no"
        default:
            return nil
        }
    }

    /// A band by its stable level name, else its label.
    public static func band(_ band: Band) -> String {
        band.level ?? band.label.text(.en)
    }
}

extension Codebook {
    /// The codebook for programs: every form with its items (type, wording, options and the column each option
    /// gets), its scoring rules and bands, and how it differs from the previous version of the same instrument.
    public func json() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(Document(forms: forms.map { form in document(for: form) }))
    }

    private func document(for form: Form) -> Document.Form {
        let definition = form.definition
        let items = definition.items.filter(\.type.takesAnswer).map { item in
            Document.Item(
                id: item.id, variable: form.itemNames[item.id] ?? item.id, type: item.type.rawValue, text: item.text,
                required: item.required, min: item.min, max: item.max, unit: item.unit,
                options: definition.options(of: item).map { option in
                    Document.Option(
                        code: option.code, label: option.label, score: option.score,
                        column: item.type == .multiple
                            ? form.variables.first { $0.source == .option(item: item.id, code: option.code) }?.name
                            : nil)
                },
                visibleWhen: item.visibleWhen ?? definition.section(containing: item.id)?.visibleWhen)
        }
        let scores = definition.scores.map { rule in
            Document.Score(
                id: rule.id, variable: form.variables.first { $0.source == .score(rule.id) }?.name ?? rule.id,
                title: rule.title,
                method: rule.method.rawValue, items: rule.items, reverse: rule.reverse, minAnswered: rule.minAnswered,
                prorate: rule.prorate, factor: rule.factor, bands: rule.bands)
        }
        let previous = forms.last { $0.definition.key == definition.key && $0.definition.version < definition.version }
        return Document.Form(
            form: form.name, key: definition.key, version: definition.version, title: definition.title,
            source: definition.source, licence: definition.licence, items: items, scores: scores,
            changesFromPrevious: previous.map { Document.Changes(from: $0.definition, to: definition) })
    }

    private struct Document: Encodable {
        struct Form: Encodable {
            let form: String
            let key: String
            let version: Int
            let title: LocalizedText
            let source: String?
            let licence: String?
            let items: [Item]
            let scores: [Score]
            let changesFromPrevious: Changes?
        }

        struct Item: Encodable {
            let id: String
            let variable: String
            let type: String
            let text: LocalizedText
            let required: Bool
            let min: Double?
            let max: Double?
            let unit: String?
            let options: [Option]
            let visibleWhen: Condition?
        }

        struct Option: Encodable {
            let code: String
            let label: LocalizedText
            let score: Double?
            let column: String?
        }

        struct Score: Encodable {
            let id: String
            let variable: String
            let title: LocalizedText
            let method: String
            let items: [String]
            let reverse: [String]
            let minAnswered: Int?
            let prorate: Bool
            let factor: Double
            let bands: [Band]
        }

        /// What an analyst must know before pooling two versions: items added, removed, or asked differently.
        struct Changes: Encodable {
            let previousVersion: Int
            let added: [String]
            let removed: [String]
            let changed: [String]
            let scoringChanged: Bool

            init(from old: InstrumentDefinition, to new: InstrumentDefinition) {
                let oldItems = Dictionary(old.items.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
                let newItems = Dictionary(new.items.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
                previousVersion = old.version
                added = new.items.map(\.id).filter { oldItems[$0] == nil }
                removed = old.items.map(\.id).filter { newItems[$0] == nil }
                changed = new.items.filter { item in
                    oldItems[item.id].map { $0 != item || old.options(of: $0) != new.options(of: item) } ?? false
                }.map(\.id)
                scoringChanged = old.scores != new.scores
            }
        }

        let forms: [Form]
    }
}
