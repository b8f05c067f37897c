import Foundation

/// Reads a REDCap data dictionary (CSV) into instrument definitions, one per form: section headers and matrix
/// groups become sections, field types and validation types map to item types, branching logic becomes visibility
/// conditions, calculated sums and means become scores. The record ID field, hidden and read-only fields are never
/// asked. Problems and notes name their row and field (`row 14 (field "anx_001")`), the way a researcher finds them
/// in a spreadsheet.
public enum REDCapImport {
    /// The longest cell read, and the most rows: a whole project's dictionary stays far below both.
    public static let maxCellLength = 10_000
    public static let maxRows = 5_000

    /// The instruments of a dictionary and what was left out of them on purpose.
    public struct Result: Sendable {
        public var instruments: [InstrumentDefinition]
        public var notes: [ImportNote]
    }

    /// Reads the forms named in `forms` (every form when nil, in the order of the dictionary) within `budget`; a file
    /// that would take longer is refused as too complex.
    public static func instruments(
        fromCSV text: String, forms chosen: [String]? = nil, budget: WorkBudget = .unlimited
    ) throws(ValidationFailure) -> Result {
        let rows = CSV.parse(text)
        guard let header = rows.first, rows.count > 1 else { throw ValidationFailure(field: "csv", code: .required) }
        guard rows.count <= maxRows + 1 else { throw ValidationFailure(field: "csv", code: .tooLong, limit: maxRows) }
        let columns = Columns(header)
        guard columns.variable != nil, columns.fieldType != nil, columns.label != nil else {
            throw ValidationFailure(field: "csv.header", code: .invalidFormat)
        }
        var validator = FieldValidator()
        var fields: [Field] = []
        for (offset, row) in rows.dropFirst().enumerated() where !row.allSatisfy({ REDCapText.trimmed($0).isEmpty }) {
            do {
                try budget.check()
            } catch {
                throw ValidationFailure(field: "csv", code: .tooComplex)
            }
            let field = Field(row, number: offset + 2, columns: columns)
            if row.contains(where: { $0.utf8.count > maxCellLength && $0.count > maxCellLength }) {
                validator.add(field.place, .tooLong, limit: maxCellLength)
                continue
            }
            fields.append(field)
        }
        try validator.check()
        let formNames = fields.reduce(into: [String]()) { names, field in
            if !names.contains(field.form) { names.append(field.form) }
        }
        for name in chosen ?? [] where !formNames.contains(name) {
            validator.add("forms", .unknown, detail: name)
        }
        try validator.check()
        var reader = Reader(fields: fields, budget: budget)
        var instruments: [InstrumentDefinition] = []
        for name in formNames where chosen?.contains(name) ?? true {
            guard let definition = reader.form(name) else { continue }
            // Problems of the rows come first: a definition missing a refused row has others that follow from it.
            guard reader.validator.errors.isEmpty else { continue }
            for problem in definition.problems() {
                reader.validator.add(
                    reader.place(of: problem.field, in: definition), problem.code, limit: problem.limit,
                    detail: problem.detail)
            }
            instruments.append(definition)
        }
        try reader.validator.check()
        guard !instruments.isEmpty else { throw ValidationFailure(field: "csv", code: .required) }
        return Result(instruments: instruments, notes: reader.notes)
    }

    /// Where each column is; headers are matched by their start, as REDCap exports vary slightly.
    struct Columns {
        var variable, form, sectionHeader, fieldType, label, choices, note, validation, minimum, maximum,
            branching, required, matrixGroup, annotation: Int?

        init(_ header: [String]) {
            func find(_ prefix: String) -> Int? {
                header.firstIndex { REDCapText.trimmed($0).lowercased().hasPrefix(prefix) }
            }
            variable = find("variable")
            form = find("form name")
            sectionHeader = find("section header")
            fieldType = find("field type")
            label = find("field label")
            choices = find("choices")
            note = find("field note")
            validation = find("text validation type")
            minimum = find("text validation min")
            maximum = find("text validation max")
            branching = find("branching logic")
            required = find("required")
            matrixGroup = find("matrix group")
            annotation = find("field annotation")
        }
    }

    /// One row of the dictionary, its cells trimmed.
    struct Field {
        let number: Int
        let variable, form, sectionHeader, type, label, choices, note, validation, minimum, maximum, branching,
            matrixGroup, annotation: String
        let required: Bool

        init(_ row: [String], number: Int, columns: Columns) {
            func cell(_ index: Int?) -> String {
                guard let index, row.indices.contains(index) else { return "" }
                return REDCapText.trimmed(row[index])
            }
            self.number = number
            variable = cell(columns.variable)
            let form = cell(columns.form)
            self.form = form.isEmpty ? "redcap_form" : form
            sectionHeader = REDCapText.plain(cell(columns.sectionHeader))
            type = cell(columns.fieldType).lowercased()
            label = REDCapText.plain(cell(columns.label))
            choices = cell(columns.choices)
            note = REDCapText.plain(cell(columns.note))
            validation = cell(columns.validation).lowercased()
            minimum = cell(columns.minimum)
            maximum = cell(columns.maximum)
            branching = cell(columns.branching)
            matrixGroup = cell(columns.matrixGroup)
            annotation = cell(columns.annotation)
            required = cell(columns.required).lowercased() == "y"
        }

        /// How problems and notes name the row: `row 14 (field "anx_001")`.
        var place: String { variable.isEmpty ? "row \(number)" : "row \(number) (field \"\(variable)\")" }

        /// Whether the annotation carries an action tag that keeps the field from participants.
        func has(_ tag: String) -> Bool {
            annotation.uppercased().split(whereSeparator: { $0.isWhitespace }).contains { word in
                word == tag || word.hasPrefix(tag + "=") || word.hasPrefix(tag + "(")
            }
        }
    }

    /// Why a field is not asked, when it is left out on purpose. REDCap makes the first field of a project its
    /// record ID, always a text field; a dictionary that starts with another type has none.
    static func omission(_ field: Field, isFirst: Bool) -> ImportNote.Kind? {
        if isFirst && field.type == "text" { return .recordID }
        if field.type == "calc" { return nil }
        if field.has("@HIDDEN") || field.has("@HIDDEN-SURVEY") { return .hidden }
        if field.has("@READONLY") || field.has("@READONLY-SURVEY") { return .readOnly }
        return nil
    }

    struct Reader {
        let fields: [Field]
        let budget: WorkBudget
        /// Each variable's field and why it is not asked, if it is not.
        let byVariable: [String: (field: Field, omitted: Bool)]
        var validator = FieldValidator()
        var notes: [ImportNote] = []

        init(fields: [Field], budget: WorkBudget) {
            self.fields = fields
            self.budget = budget
            var byVariable: [String: (Field, Bool)] = [:]
            for (index, field) in fields.enumerated() where byVariable[field.variable] == nil {
                let omitted = field.type == "calc" || REDCapImport.omission(field, isFirst: index == 0) != nil
                byVariable[field.variable] = (field, omitted)
            }
            self.byVariable = byVariable
        }

        mutating func form(_ name: String) -> InstrumentDefinition? {
            var sections: [Section] = []
            var currentMatrix: String?
            var scores: [ScoreRule] = []
            let rows = fields.enumerated().filter { $0.element.form == name }
            for (index, field) in rows {
                if let kind = REDCapImport.omission(field, isFirst: index == 0) {
                    notes.append(ImportNote(place: field.place, kind: kind, subject: field.variable))
                    continue
                }
                if field.type == "calc" {
                    calculation(field, form: name).map { scores.append($0) }
                    continue
                }
                let matrix = field.matrixGroup
                if sections.isEmpty || !field.sectionHeader.isEmpty || matrix != (currentMatrix ?? "") {
                    sections.append(
                        Section(
                            id: matrix.isEmpty ? "section-\(sections.count + 1)" : matrix,
                            title: field.sectionHeader.isEmpty ? nil : LocalizedText(en: field.sectionHeader),
                            items: []))
                    currentMatrix = matrix.isEmpty ? nil : matrix
                }
                guard var item = item(field) else { continue }
                if !field.branching.isEmpty { item.visibleWhen = condition(field, form: name) }
                if currentMatrix != nil, item.type == .single, let options = item.options {
                    if let shared = sections[sections.count - 1].options, shared != options {
                        validator.add(field.place, .mismatch)
                    }
                    sections[sections.count - 1].options = options
                    item.options = nil
                }
                sections[sections.count - 1].items.append(item)
            }
            // A form with nothing to ask (only the record ID, say) makes no questionnaire; the notes say why.
            guard sections.contains(where: { !$0.items.isEmpty }) else { return nil }
            let title = REDCapImport.formTitle(name)
            return InstrumentDefinition(
                key: InstrumentKeys.slug(REDCapImport.formKey(name)), version: 1, title: LocalizedText(en: title),
                source: "Imported from a REDCap data dictionary (form \(name))",
                sections: sections.filter { !$0.items.isEmpty }, scores: scores)
        }

        /// The row a problem of the definition (`sections.2.items.0.options`, `scores.1.items`) comes from.
        func place(of path: String, in definition: InstrumentDefinition) -> String {
            let parts = path.split(separator: ".").map(String.init)
            var variable: String?
            if parts.count >= 2, parts[0] == "sections", let section = Int(parts[1]),
                definition.sections.indices.contains(section)
            {
                let items = definition.sections[section].items
                let item = parts.count >= 4 && parts[2] == "items" ? Int(parts[3]) ?? 0 : 0
                variable = items.indices.contains(item) ? items[item].id : nil
            } else if parts.count >= 2, parts[0] == "scores", let score = Int(parts[1]),
                definition.scores.indices.contains(score)
            {
                variable = definition.scores[score].id
            }
            return variable.flatMap { byVariable[$0]?.field.place } ?? path
        }

        mutating func item(_ field: Field) -> Item? {
            // A tick box without a label of its own ("I don't know" beside a question) reads as its one choice.
            var text = field.label
            if text.isEmpty, field.type == "checkbox", !field.choices.contains("|"),
                let comma = field.choices.firstIndex(of: ",")
            {
                text = REDCapText.plain(String(field.choices[field.choices.index(after: comma)...]))
            }
            if text.isEmpty { text = field.variable }
            var item = Item(id: field.variable, type: .display, text: LocalizedText(en: text), required: field.required)
            if !field.note.isEmpty { item.help = LocalizedText(en: field.note) }
            switch field.type {
            case "text":
                REDCapValidation.apply(field, to: &item)
            case "notes":
                item.type = .text
                item.multiline = true
            case "radio", "dropdown", "checkbox":
                item.type = field.type == "checkbox" ? .multiple : .single
                guard let options = options(field) else { return nil }
                item.options = options
            case "yesno", "truefalse":
                item.type = .boolean
            case "slider":
                item.type = .slider
                item.min = Double(field.minimum) ?? 0
                item.max = Double(field.maximum) ?? 100
                item.step = 1
                let ends = field.choices.split(separator: "|").map { REDCapText.plain(String($0)) }
                if let first = ends.first, !first.isEmpty { item.minLabel = LocalizedText(en: first) }
                if ends.count > 1, let last = ends.last, !last.isEmpty { item.maxLabel = LocalizedText(en: last) }
            case "descriptive":
                item.type = .display
                item.required = false
            default:
                validator.add(field.place, .unsupportedFieldType, detail: field.type)
                return nil
            }
            return item
        }

        /// `1, Never | 2, Sometimes | 3, Often`, each code and label trimmed of every space and line break.
        mutating func options(_ field: Field) -> [AnswerOption]? {
            var result: [AnswerOption] = []
            for part in field.choices.split(separator: "|") {
                guard let comma = part.firstIndex(of: ",") else {
                    validator.add(field.place, .choicesFormat)
                    return nil
                }
                let code = REDCapText.trimmed(String(part[..<comma]))
                let label = REDCapText.plain(String(part[part.index(after: comma)...]))
                guard !code.isEmpty else {
                    validator.add(field.place, .choicesFormat)
                    return nil
                }
                result.append(AnswerOption(code: code, label: LocalizedText(en: label.isEmpty ? code : label)))
            }
            if result.isEmpty {
                validator.add(field.place, .choicesFormat)
                return nil
            }
            return result
        }

        mutating func condition(_ field: Field, form: String) -> Condition? {
            guard field.branching.count <= REDCapLogic.maxLength else {
                validator.add(field.place, .tooLong, limit: REDCapLogic.maxLength)
                return nil
            }
            let types = byVariable.mapValues { $0.field.type }
            do {
                let condition = try REDCapLogic.condition(field.branching, fieldTypes: types)
                for clause in condition.allClauses {
                    guard let target = byVariable[clause.item] else {
                        validator.add(field.place, .unknownField, detail: clause.item)
                        return nil
                    }
                    if target.field.form != form {
                        validator.add(field.place, .otherForm, detail: clause.item)
                        return nil
                    }
                    if target.omitted {
                        validator.add(field.place, .notAsked, detail: clause.item)
                        return nil
                    }
                }
                return condition
            } catch .longitudinal {
                validator.add(field.place, .longitudinalLogic, detail: field.branching)
            } catch {
                validator.add(field.place, .unsupportedLogic, detail: field.branching)
            }
            return nil
        }

        /// A calculated field whose formula sums or averages fields of its form becomes a score; any other is noted
        /// by name and left out.
        mutating func calculation(_ field: Field, form: String) -> ScoreRule? {
            guard let (method, variables) = REDCapLogic.aggregate(field.choices),
                variables.allSatisfy({ byVariable[$0].map { $0.field.form == form && !$0.omitted } ?? false })
            else {
                notes.append(ImportNote(place: field.place, kind: .calculationLeftOut, subject: field.variable))
                return nil
            }
            notes.append(ImportNote(place: field.place, kind: .calculationAsScore, subject: field.variable))
            return ScoreRule(
                id: field.variable, title: LocalizedText(en: field.label.isEmpty ? field.variable : field.label),
                method: method, items: variables, decimals: method == .sum ? 0 : 2)
        }
    }

    /// The key a form name suggests; Interlude's own exports name forms `<key>_v<version>`, and the version goes.
    static func formKey(_ name: String) -> String {
        guard let range = name.range(of: "_v", options: .backwards),
            !name[range.upperBound...].isEmpty, name[range.upperBound...].allSatisfy(\.isNumber)
        else { return name }
        return String(name[..<range.lowerBound])
    }

    static func formTitle(_ name: String) -> String {
        formKey(name).replacingOccurrences(of: "_", with: " ").capitalized
    }
}

/// Something an import left out on purpose, so that whoever imports knows what the file asked for.
public struct ImportNote: Hashable, Sendable, Codable {
    public enum Kind: String, Hashable, Sendable, Codable, CaseIterable {
        /// The dictionary's first field names the record; Interlude names participants itself.
        case recordID
        /// Marked `@HIDDEN` (or hidden in surveys): never shown to participants.
        case hidden
        /// Marked `@READONLY`: filled in by the project, not by the person.
        case readOnly
        /// A calculated sum or mean, imported as a score.
        case calculationAsScore
        /// A calculation Interlude does not run, left out.
        case calculationLeftOut
    }

    /// Where in the file: `row 14 (field "anx_001")`.
    public var place: String
    public var kind: Kind
    /// The field or item it is about.
    public var subject: String

    public init(place: String, kind: Kind, subject: String) {
        self.place = place
        self.kind = kind
        self.subject = subject
    }
}

/// REDCap's text validation types, each as the closest item type with its bounds and decimals.
enum REDCapValidation {
    static func apply(_ field: REDCapImport.Field, to item: inout Item) {
        let type = field.validation
        let commaDecimal = type.hasSuffix("_comma_decimal")
        let base = commaDecimal ? String(type.dropLast("_comma_decimal".count)) : type
        func number(_ text: String) -> Double? {
            Double(commaDecimal ? text.replacingOccurrences(of: ",", with: ".") : text)
        }
        switch base {
        case "integer", "number":
            item.type = .number
            item.decimals = base == "integer" ? 0 : nil
        case let dp where dp.hasPrefix("number_") && dp.hasSuffix("dp"):
            item.type = .number
            item.decimals = Int(dp.dropFirst("number_".count).dropLast(2))
        case let date where date.hasPrefix("datetime"):
            item.type = .dateTime
        case let date where date.hasPrefix("date"):
            item.type = .date
        case "time", "time_hh_mm":
            item.type = .time
        case "time_hh_mm_ss":
            item.type = .time
            item.step = 1
        case "time_mm_ss":
            item.type = .text
            item.format = .minutesSeconds
            item.maxLength = 6
        default:
            item.type = .text
        }
        switch item.type {
        case .number:
            item.min = number(field.minimum)
            item.max = number(field.maximum)
        case .date, .dateTime:
            item.earliest = isoDate(field.minimum)
            item.latest = isoDate(field.maximum)
        default:
            break
        }
    }

    /// A bound REDCap writes as `2026-01-31` or `2026-01-31 08:00` kept as its date; `today`, `now` and others are
    /// no fixed bound.
    private static func isoDate(_ text: String) -> String? {
        let day = String(text.prefix(10))
        return LocalDate(day) == nil ? nil : day
    }
}

/// Field labels in REDCap may carry HTML; Interlude shows plain text.
enum REDCapText {
    /// Without every space and line break at either end, whichever Unicode character makes it.
    static func trimmed(_ text: String) -> String {
        let scalars = text.unicodeScalars
        guard let first = scalars.firstIndex(where: { !$0.properties.isWhitespace }),
            let last = scalars.lastIndex(where: { !$0.properties.isWhitespace })
        else { return "" }
        return String(scalars[first...last])
    }

    static func plain(_ text: String) -> String {
        var result = withoutTags(text.replacingOccurrences(of: "<br>", with: " ", options: .caseInsensitive))
        for (entity, character) in [("&nbsp;", " "), ("&amp;", "&"), ("&lt;", "<"), ("&gt;", ">"), ("&quot;", "\"")] {
            result = result.replacingOccurrences(of: entity, with: character)
        }
        return trimmed(result)
    }

    /// The text without its tags (`<b>`, `</span>`): what lies between a `<` and the next `>` goes; a `<` with no `>`
    /// after it stays, as in "less than 3".
    private static func withoutTags(_ text: String) -> String {
        var result = ""
        var pending = ""
        var inTag = false
        for character in text {
            if inTag {
                pending.append(character)
                if character == ">" {
                    inTag = false
                    pending = ""
                }
            } else if character == "<" {
                inTag = true
                pending = "<"
            } else {
                result.append(character)
            }
        }
        return result + pending
    }
}
