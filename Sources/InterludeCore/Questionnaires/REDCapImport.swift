import Foundation

/// Reads a REDCap data dictionary (CSV, one form) into an instrument definition: section headers and matrix
/// groups become sections, field types map to item types, simple branching logic becomes visibility conditions.
/// Problems are named by row (`row.7.branchingLogic`), the way a researcher finds them in a spreadsheet.
public enum REDCapImport {
    /// The longest cell read, and the most rows: a whole project's dictionary stays far below both.
    public static let maxCellLength = 10_000
    public static let maxRows = 5_000

    /// Reads the dictionary within `budget`; a file that would take longer is refused as too complex.
    public static func definition(
        fromCSV text: String, budget: WorkBudget = .unlimited
    ) throws(ValidationFailure) -> InstrumentDefinition {
        let rows = CSV.parse(text)
        guard let header = rows.first, rows.count > 1 else { throw ValidationFailure(field: "csv", code: .required) }
        guard rows.count <= maxRows + 1 else { throw ValidationFailure(field: "csv", code: .tooLong, limit: maxRows) }
        let columns = Columns(header)
        guard columns.variable != nil, columns.fieldType != nil, columns.label != nil else {
            throw ValidationFailure(field: "csv.header", code: .invalidFormat)
        }
        var builder = Builder(columns: columns)
        for (offset, row) in rows.dropFirst().enumerated()
        where !row.allSatisfy({ $0.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty }) {
            do {
                try budget.check()
            } catch {
                throw ValidationFailure(field: "csv", code: .tooComplex)
            }
            if let index = row.firstIndex(where: { $0.utf8.count > maxCellLength && $0.count > maxCellLength }) {
                builder.validator.add("row.\(offset + 2).\(columns.name(of: index))", .tooLong, limit: maxCellLength)
                continue
            }
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
                header.firstIndex { $0.trimmingCharacters(in: .whitespacesAndNewlines).lowercased().hasPrefix(prefix) }
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

        /// How a problem names the column at `index`: as the other problems of its row do, or by its number.
        func name(of index: Int) -> String {
            let named: [(Int?, String)] = [
                (variable, "variable"), (form, "formName"), (sectionHeader, "sectionHeader"), (fieldType, "fieldType"),
                (label, "label"), (choices, "choices"), (note, "note"), (branching, "branchingLogic"),
            ]
            return named.first { $0.0 == index }?.1 ?? String(index + 1)
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
                    item.decimals =
                        validation == "integer"
                        ? 0 : (validation.hasSuffix("dp") ? Int(String(validation.dropLast(2).last!)) : nil)
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
                let ends = choices.split(separator: "|").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
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
            if logic.count > REDCapBranching.maxLength {
                validator.add("\(path).branchingLogic", .tooLong, limit: REDCapBranching.maxLength)
            } else if !logic.isEmpty {
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
                let pieces = part.split(separator: ",", maxSplits: 1).map {
                    $0.trimmingCharacters(in: .whitespacesAndNewlines)
                }
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

/// REDCap branching logic of the simple kind: comparisons of fields joined all by `and` or all by `or`. Read by one
/// pass over the characters, never by a regular expression: the text comes from whoever uploads the dictionary.
enum REDCapBranching {
    struct Unsupported: Error {}

    /// The longest branching logic read; longer ones are refused before any reading.
    static let maxLength = 2000

    static func condition(_ logic: String, fieldTypes: [String: String]) throws(Unsupported) -> Condition {
        let (parts, joiner) = try split(Array(logic))
        var clauses: [Clause] = []
        for part in parts { clauses.append(try clause(part, fieldTypes: fieldTypes)) }
        return Condition(joiner == "or" ? .any : .all, clauses)
    }

    /// The clauses between the `and`s or `or`s outside quotes and brackets, and which of the two joins them; a
    /// parenthesis outside a field's brackets or a quote, or both joiners at once, is more than the simple kind.
    private static func split(_ characters: [Character]) throws(Unsupported) -> (parts: [String], joiner: String?) {
        var parts: [String] = []
        var joiner: String?
        var current = ""
        var quote: Character?
        var inBrackets = false
        var index = 0
        while index < characters.count {
            let character = characters[index]
            if let open = quote {
                if character == open { quote = nil }
            } else if inBrackets {
                if character == "]" { inBrackets = false }
            } else if character == "'" || character == "\"" {
                quote = character
            } else if character == "[" {
                inBrackets = true
            } else if character == "(" || character == ")" {
                throw Unsupported()
            } else if character.isWhitespace {
                // The whole run of whitespace at once: looking for a joiner from each of its characters would read
                // a long run again and again.
                var end = index
                while end < characters.count, characters[end].isWhitespace { end += 1 }
                if let (word, next) = self.joiner(in: characters, at: end) {
                    guard joiner == nil || joiner == word else { throw Unsupported() }
                    joiner = word
                    parts.append(current)
                    current = ""
                    index = next
                } else {
                    current.append(contentsOf: characters[index..<end])
                    index = end
                }
                continue
            }
            current.append(character)
            index += 1
        }
        parts.append(current)
        return (parts.map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }, joiner)
    }

    /// `and` or `or` at `start`, followed by whitespace, with the index after that whitespace.
    private static func joiner(in characters: [Character], at start: Int) -> (String, Int)? {
        for word in ["and", "or"] {
            let end = start + word.count
            guard end < characters.count, characters[end].isWhitespace,
                String(characters[start..<end]).lowercased() == word
            else { continue }
            var next = end
            while next < characters.count, characters[next].isWhitespace { next += 1 }
            return (word, next)
        }
        return nil
    }

    /// `[field] = '1'`, `[field] <> ''`, `[field] > 3`, `[checkbox(2)] = '1'`.
    private static func clause(_ text: String, fieldTypes: [String: String]) throws(Unsupported) -> Clause {
        guard text.first == "[", let close = text.firstIndex(of: "]") else { throw Unsupported() }
        let inside = text[text.index(after: text.startIndex)..<close]
        var field = inside
        var code: String?
        if let open = inside.firstIndex(of: "(") {
            guard inside.last == ")" else { throw Unsupported() }
            field = inside[..<open]
            code = String(inside[inside.index(after: open)..<inside.index(before: inside.endIndex)])
            guard code?.isEmpty == false, code?.contains(")") == false else { throw Unsupported() }
        }
        guard !field.isEmpty, field.unicodeScalars.allSatisfy(isNameScalar) else { throw Unsupported() }
        let rest = text[text.index(after: close)...].drop { $0.isWhitespace }
        guard let operatorText = ["<>", "!=", ">=", "<=", "=", ">", "<"].first(where: { rest.hasPrefix($0) }) else {
            throw Unsupported()
        }
        var value = rest.dropFirst(operatorText.count).trimmingCharacters(in: .whitespacesAndNewlines)
        guard !value.isEmpty else { throw Unsupported() }
        if value.count >= 2, let first = value.first, first == "'" || first == "\"", value.last == first {
            value = String(value.dropFirst().dropLast())
        }
        if let code {
            guard operatorText == "=", value == "1" else { throw Unsupported() }
            return Clause(item: String(field), .equals, .text(code))
        }
        if value.isEmpty {
            switch operatorText {
            case "=": return Clause(item: String(field), .answered, .bool(false))
            case "<>", "!=": return Clause(item: String(field), .answered, .bool(true))
            default: throw Unsupported()
            }
        }
        let answer: AnswerValue
        switch fieldTypes[String(field)] {
        case "yesno", "truefalse": answer = .bool(value == "1")
        case "radio", "dropdown", "checkbox": answer = .text(value)
        default: answer = Double(value).map(AnswerValue.number) ?? .text(value)
        }
        switch operatorText {
        case "=": return Clause(item: String(field), .equals, answer)
        case "<>", "!=": return Clause(item: String(field), .notEquals, answer)
        case ">": return Clause(item: String(field), .greater, answer)
        case "<": return Clause(item: String(field), .less, answer)
        // At least and at most have no condition of their own: refused rather than read as something else.
        default: throw Unsupported()
        }
    }

    private static func isNameScalar(_ scalar: Unicode.Scalar) -> Bool {
        ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar) || scalar == "_"
    }
}

/// Field labels in REDCap may carry HTML; Interlude shows plain text.
enum REDCapText {
    static func plain(_ text: String) -> String {
        var result = withoutTags(text.replacingOccurrences(of: "<br>", with: " ", options: .caseInsensitive))
        for (entity, character) in [("&nbsp;", " "), ("&amp;", "&"), ("&lt;", "<"), ("&gt;", ">"), ("&quot;", "\"")] {
            result = result.replacingOccurrences(of: entity, with: character)
        }
        return result.trimmingCharacters(in: .whitespacesAndNewlines)
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
