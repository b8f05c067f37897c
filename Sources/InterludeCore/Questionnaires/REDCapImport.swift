import Foundation

/// Reads a REDCap data dictionary (CSV, one form) into an instrument definition: section headers and matrix
/// groups become sections, field types map to item types, simple branching logic becomes visibility conditions.
/// Problems are named by row (`row.7.branchingLogic`), the way a researcher finds them in a spreadsheet.
public enum REDCapImport {
    public static func definition(fromCSV text: String) throws(ValidationFailure) -> InstrumentDefinition {
        let rows = CSV.parse(text)
        guard let header = rows.first, rows.count > 1 else { throw ValidationFailure(field: "csv", code: .required) }
        let columns = Columns(header)
        guard columns.variable != nil, columns.fieldType != nil, columns.label != nil else {
            throw ValidationFailure(field: "csv.header", code: .invalidFormat)
        }
        var builder = Builder(columns: columns)
        for (offset, row) in rows.dropFirst().enumerated() where !row.allSatisfy({ $0.trimmingCharacters(in: .whitespaces).isEmpty }) {
            builder.add(row, number: offset + 2)
        }
        return try builder.finish()
    }

    /// Where each column is; headers are matched by their start, as REDCap exports vary slightly.
    struct Columns {
        var variable, form, sectionHeader, fieldType, label, choices, note, validation, minimum, maximum,
            branching, required, matrixGroup: Int?

        init(_ header: [String]) {
            func find(_ prefix: String) -> Int? {
                header.firstIndex { $0.trimmingCharacters(in: .whitespaces).lowercased().hasPrefix(prefix) }
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
        }
    }

    struct Builder {
        let columns: Columns
        var validator = FieldValidator()
        var formName: String?
        var sections: [Section] = []
        var currentMatrix: String?
        var fieldTypes: [String: String] = [:]

        init(columns: Columns) {
            self.columns = columns
        }

        func cell(_ row: [String], _ index: Int?) -> String {
            guard let index, row.indices.contains(index) else { return "" }
            return row[index].trimmingCharacters(in: .whitespacesAndNewlines)
        }

        mutating func add(_ row: [String], number: Int) {
            let path = "row.\(number)"
            let variable = cell(row, columns.variable)
            let form = cell(row, columns.form)
            if let formName, !form.isEmpty, form != formName {
                validator.add("\(path).formName", .notAllowed)
                return
            }
            if formName == nil, !form.isEmpty { formName = form }
            let header = REDCapText.plain(cell(row, columns.sectionHeader))
            let matrix = cell(row, columns.matrixGroup)
            if sections.isEmpty || !header.isEmpty || (!matrix.isEmpty && matrix != currentMatrix)
                || (matrix.isEmpty && currentMatrix != nil)
            {
                sections.append(
                    Section(
                        id: matrix.isEmpty ? "section-\(sections.count + 1)" : matrix,
                        title: header.isEmpty ? nil : LocalizedText(en: header), items: []))
                currentMatrix = matrix.isEmpty ? nil : matrix
            }
            let fieldType = cell(row, columns.fieldType).lowercased()
            fieldTypes[variable] = fieldType
            let label = REDCapText.plain(cell(row, columns.label))
            var item = Item(
                id: variable, type: .display, text: LocalizedText(en: label.isEmpty ? variable : label),
                required: cell(row, columns.required).lowercased() == "y")
            let note = REDCapText.plain(cell(row, columns.note))
            if !note.isEmpty { item.help = LocalizedText(en: note) }
            let choices = cell(row, columns.choices)
            switch fieldType {
            case "text":
                let validation = cell(row, columns.validation).lowercased()
                switch validation {
                case "integer", "number", "number_1dp", "number_2dp":
                    item.type = .number
                    item.decimals = validation == "integer" ? 0 : (validation.hasSuffix("dp") ? Int(String(validation.dropLast(2).last!)) : nil)
                    item.min = Double(cell(row, columns.minimum))
                    item.max = Double(cell(row, columns.maximum))
                case let type where type.hasPrefix("datetime"): item.type = .dateTime
                case let type where type.hasPrefix("date"): item.type = .date
                case "time", "time_mm_ss": item.type = .time
                default: item.type = .text
                }
            case "notes":
                item.type = .text
                item.multiline = true
            case "radio", "dropdown":
                item.type = .single
                item.options = options(choices, path: "\(path).choices")
            case "checkbox":
                item.type = .multiple
                item.options = options(choices, path: "\(path).choices")
            case "yesno", "truefalse":
                item.type = .boolean
            case "slider":
                item.type = .slider
                item.min = Double(cell(row, columns.minimum)) ?? 0
                item.max = Double(cell(row, columns.maximum)) ?? 100
                item.step = 1
                let ends = choices.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
                if let first = ends.first, !first.isEmpty { item.minLabel = LocalizedText(en: first) }
                if ends.count > 1, let last = ends.last, !last.isEmpty { item.maxLabel = LocalizedText(en: last) }
            case "descriptive":
                item.type = .display
                item.required = false
            default:
                validator.add("\(path).fieldType", .notAllowed)
                return
            }
            let logic = cell(row, columns.branching)
            if !logic.isEmpty {
                do {
                    item.visibleWhen = try REDCapBranching.condition(logic, fieldTypes: fieldTypes)
                } catch {
                    validator.add("\(path).branchingLogic", .invalidFormat)
                }
            }
            if let matrixName = currentMatrix, item.type == .single, let options = item.options {
                if let shared = sections[sections.count - 1].options, shared != options {
                    validator.add("\(path).choices", .mismatch)
                }
                sections[sections.count - 1].options = options
                sections[sections.count - 1].id = matrixName
                item.options = nil
            }
            sections[sections.count - 1].items.append(item)
        }

        /// `1, Never | 2, Sometimes | 3, Often`.
        mutating func options(_ choices: String, path: String) -> [AnswerOption]? {
            var result: [AnswerOption] = []
            for part in choices.split(separator: "|") {
                let pieces = part.split(separator: ",", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
                guard pieces.count == 2, !pieces[0].isEmpty else {
                    validator.add(path, .invalidFormat)
                    return nil
                }
                result.append(AnswerOption(code: pieces[0], label: LocalizedText(en: REDCapText.plain(pieces[1]))))
            }
            if result.isEmpty { validator.add(path, .required) }
            return result
        }

        mutating func finish() throws(ValidationFailure) -> InstrumentDefinition {
            try validator.check()
            let name = formName ?? "redcap-form"
            let title = name.replacingOccurrences(of: "_", with: " ").capitalized
            return InstrumentDefinition(
                key: InstrumentKeys.slug(name), version: 1, title: LocalizedText(en: title),
                source: "Imported from a REDCap data dictionary", sections: sections.filter { !$0.items.isEmpty })
        }
    }
}

/// REDCap branching logic of the simple kind: comparisons of fields joined all by `and` or all by `or`.
enum REDCapBranching {
    struct Unsupported: Error {}

    static func condition(_ logic: String, fieldTypes: [String: String]) throws(Unsupported) -> Condition {
        guard !logic.contains("(") || logic.range(of: #"\[[A-Za-z0-9_]+\([^)]*\)\]"#, options: .regularExpression) != nil
        else { throw Unsupported() }
        let lowered = " " + logic + " "
        let hasAnd = lowered.range(of: #"\s+and\s+"#, options: [.regularExpression, .caseInsensitive]) != nil
        let hasOr = lowered.range(of: #"\s+or\s+"#, options: [.regularExpression, .caseInsensitive]) != nil
        guard !(hasAnd && hasOr) else { throw Unsupported() }
        let separator = hasOr ? #"\s+or\s+"# : #"\s+and\s+"#
        let parts = split(logic, by: separator)
        var clauses: [Clause] = []
        for part in parts { clauses.append(try clause(part, fieldTypes: fieldTypes)) }
        return Condition(hasOr ? .any : .all, clauses)
    }

    private static func split(_ text: String, by pattern: String) -> [String] {
        var parts: [String] = []
        var rest = Substring(text)
        while let range = rest.range(of: pattern, options: [.regularExpression, .caseInsensitive]) {
            parts.append(String(rest[..<range.lowerBound]))
            rest = rest[range.upperBound...]
        }
        parts.append(String(rest))
        return parts.map { $0.trimmingCharacters(in: .whitespaces) }
    }

    /// `[field] = '1'`, `[field] <> ''`, `[field] > 3`, `[checkbox(2)] = '1'`.
    private static func clause(_ text: String, fieldTypes: [String: String]) throws(Unsupported) -> Clause {
        let pattern = #"^\[([A-Za-z0-9_]+)(?:\(([^)]+)\))?\]\s*(=|<>|!=|>|<)\s*(.+)$"#
        guard let regex = try? NSRegularExpression(pattern: pattern),
            let match = regex.firstMatch(in: text, range: NSRange(text.startIndex..., in: text))
        else { throw Unsupported() }
        func group(_ index: Int) -> String? {
            Range(match.range(at: index), in: text).map { String(text[$0]) }
        }
        guard let field = group(1), let operatorText = group(3), let rawValue = group(4) else { throw Unsupported() }
        var value = rawValue.trimmingCharacters(in: .whitespaces)
        if value.count >= 2, let first = value.first, first == "'" || first == "\"", value.last == first {
            value = String(value.dropFirst().dropLast())
        }
        if let code = group(2) {
            guard operatorText == "=", value == "1" else { throw Unsupported() }
            return Clause(item: field, .equals, .text(code))
        }
        if value.isEmpty {
            switch operatorText {
            case "=": return Clause(item: field, .answered, .bool(false))
            case "<>", "!=": return Clause(item: field, .answered, .bool(true))
            default: throw Unsupported()
            }
        }
        let answer: AnswerValue
        switch fieldTypes[field] {
        case "yesno", "truefalse": answer = .bool(value == "1")
        case "radio", "dropdown", "checkbox": answer = .text(value)
        default: answer = Double(value).map(AnswerValue.number) ?? .text(value)
        }
        switch operatorText {
        case "=": return Clause(item: field, .equals, answer)
        case "<>", "!=": return Clause(item: field, .notEquals, answer)
        case ">": return Clause(item: field, .greater, answer)
        default: return Clause(item: field, .less, answer)
        }
    }
}

/// Field labels in REDCap may carry HTML; Interlude shows plain text.
enum REDCapText {
    static func plain(_ text: String) -> String {
        var result = text.replacingOccurrences(of: "<br>", with: " ", options: .caseInsensitive)
        result = result.replacingOccurrences(of: "<[^>]+>", with: "", options: .regularExpression)
        for (entity, character) in [("&nbsp;", " "), ("&amp;", "&"), ("&lt;", "<"), ("&gt;", ">"), ("&quot;", "\"")] {
            result = result.replacingOccurrences(of: entity, with: character)
        }
        return result.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
