import Foundation

/// A codebook as a REDCap data dictionary: the eighteen columns REDCap's Data Dictionary upload reads, one row per
/// variable, `record_id` first. Multiple choice becomes `checkbox` (REDCap names its columns `item___code`), yes/no
/// `yesno`, numbers `text` with number validation, scores `text` marked read-only. Conditions that REDCap's
/// branching logic can say are written as branching logic.
public enum REDCapDictionary {
    public static let header = [
        "Variable / Field Name", "Form Name", "Section Header", "Field Type", "Field Label",
        "Choices, Calculations, OR Slider Labels", "Field Note", "Text Validation Type OR Show Slider Number",
        "Text Validation Min", "Text Validation Max", "Identifier?", "Branching Logic (Show field only if...)",
        "Required Field?", "Custom Alignment", "Question Number (surveys only)", "Matrix Group Name", "Matrix Ranking?",
        "Field Annotation",
    ]

    /// Choices (`-1, Never | 1, Often`), branching logic and action tags (`@READONLY`) are REDCap's syntax, written by
    /// the server from codes and conditions: kept as they are where every other cell is neutralised.
    static let syntaxColumns: Set<Int> = [5, 11, 17]

    public static func csv(_ codebook: Codebook) -> String {
        var text = CSV.row(header)
        if let first = codebook.forms.first {
            text += CSV.row(
                row(Codebook.recordID, form: first.name, type: "text", label: "Pseudonym"), verbatim: syntaxColumns)
        }
        var matrices: Set<String> = []
        for form in codebook.forms {
            text += rows(of: form, matrices: &matrices).map { CSV.row($0, verbatim: syntaxColumns) }.joined()
        }
        return text
    }

    /// The rows of one form. A section whose questions share one scale is a matrix group, named after the section
    /// (prefixed with the form's name where an earlier form has the name: REDCap wants each group's name unique).
    static func rows(of form: Codebook.Form, matrices: inout Set<String>) -> [[String?]] {
        let definition = form.definition
        var matrixNames: [String: String] = [:]
        for section in definition.sections where !(section.options ?? []).isEmpty {
            var name = ExportColumn.name(section.id)
            if matrices.contains(name) { name = ExportColumn.name(form.name + "_" + section.id) }
            matrices.insert(name)
            matrixNames[section.id] = name
        }
        var rows: [[String?]] = []
        var seenSections: Set<String> = []
        var written: Set<String> = []
        for variable in form.variables {
            switch variable.source {
            case .item(let id), .option(let id, _):
                guard written.insert(id).inserted, let item = definition.item(id), let name = form.itemNames[id] else {
                    continue
                }
                var row = itemRow(item, name: name, form: form)
                if let section = definition.section(containing: id) {
                    if seenSections.insert(section.id).inserted { row[2] = section.title?.text(.en) }
                    if item.type == .single, (item.options ?? []).isEmpty { row[15] = matrixNames[section.id] }
                }
                rows.append(row)
            case .other(let id):
                let question = definition.item(id)?.text.text(.en) ?? id
                rows.append(row(variable.name, form: form.name, type: "text", label: question + " (own words)"))
            case .score(let id):
                let rule = definition.scores.first { $0.id == id }
                var row = row(variable.name, form: form.name, type: "text", label: rule?.title.text(.en) ?? id)
                if let rule, let formula = calculation(rule, form: form) {
                    row[3] = "calc"
                    row[5] = formula
                } else {
                    row[7] = "number"
                    row[17] =
                        "@READONLY computed by Interlude: \(rule?.method.rawValue ?? "") of \(rule?.items.joined(separator: ", ") ?? "")"
                }
                rows.append(row)
            case .band(let id):
                let rule = definition.scores.first { $0.id == id }
                var row = row(
                    variable.name, form: form.name, type: "text", label: (rule?.title.text(.en) ?? id) + " (band)")
                row[17] = "@READONLY"
                rows.append(row)
            }
        }
        return rows
    }

    /// A score REDCap computes the same way, as a calculated field's formula (`sum([a],[b])`): a plain sum or mean
    /// of items whose option codes are their values; nil for anything more (reversed items, factors, prorating),
    /// which stays a read-only field Interlude fills in.
    static func calculation(_ rule: ScoreRule, form: Codebook.Form) -> String? {
        guard rule.reverse.isEmpty, rule.factor == 1, !rule.prorate,
            rule.minAnswered ?? rule.items.count == rule.items.count
        else { return nil }
        var fields: [String] = []
        for id in rule.items {
            guard let item = form.definition.item(id), item.type != .multiple, let name = form.itemNames[id],
                form.definition.options(of: item).allSatisfy({ $0.score == nil || $0.score == Double($0.code) })
            else { return nil }
            fields.append("[\(name)]")
        }
        return "\(rule.method.rawValue)(\(fields.joined(separator: ",")))"
    }

    private static func itemRow(_ item: Item, name: String, form: Codebook.Form) -> [String?] {
        let definition = form.definition
        let options = definition.options(of: item)
        let choices = options.map { "\($0.code), \($0.label.text(.en))" }.joined(separator: " | ")
        var row = row(name, form: form.name, type: "text", label: item.text.text(.en))
        row[6] = item.help?.text(.en)
        switch item.type {
        case .single:
            row[3] = "radio"
            row[5] = choices
        case .multiple:
            row[3] = "checkbox"
            row[5] = choices
        case .boolean:
            row[3] = "yesno"
        case .slider:
            row[3] = "slider"
            row[5] = [item.minLabel?.text(.en) ?? "", "", item.maxLabel?.text(.en) ?? ""].joined(separator: " | ")
            row[7] = "number"
        case .scale, .number:
            row[7] = item.decimals == 0 || item.type == .scale ? "integer" : "number"
        case .date: row[7] = "date_ymd"
        case .time: row[7] = item.step == 1 ? "time_hh_mm_ss" : "time"
        case .dateTime: row[7] = "datetime_ymd"
        case .text:
            row[3] = item.multiline ? "notes" : "text"
            if item.format == .minutesSeconds { row[7] = "time_mm_ss" }
        case .display: row[3] = "descriptive"
        }
        row[8] = item.min.map(CSV.number) ?? item.earliest
        row[9] = item.max.map(CSV.number) ?? item.latest
        row[12] = item.required ? "y" : nil
        let condition = item.visibleWhen ?? definition.section(containing: item.id)?.visibleWhen
        row[11] = condition.flatMap { branching($0, definition: definition, names: form.itemNames) }
        return row
    }

    private static func row(_ name: String, form: String, type: String, label: String) -> [String?] {
        var row = [String?](repeating: nil, count: header.count)
        row[0] = name
        row[1] = form
        row[3] = type
        row[4] = label
        return row
    }

    /// REDCap branching logic for a condition, or nil when it names an item outside the form or compares in a way
    /// REDCap cannot say.
    static func branching(_ condition: Condition, definition: InstrumentDefinition, names: [String: String]) -> String?
    {
        var parts: [String] = []
        for clause in condition.clauses {
            guard let name = names[clause.item], let item = definition.item(clause.item) else { return nil }
            switch (clause.operator, clause.value) {
            case (.answered, .bool(let answered)?):
                parts.append("[\(name)] \(answered ? "<>" : "=") ''")
            case (.equals, .text(let code)?) where item.type == .multiple:
                parts.append("[\(name)(\(code))] = '1'")
            case (.equals, let value?), (.notEquals, let value?):
                parts.append(
                    "[\(name)] \(clause.operator == .equals ? "=" : "<>") '\(ExportValue.raw(value, for: item))'")
            case (.greater, let value?), (.less, let value?), (.atLeast, let value?), (.atMost, let value?):
                // In order, by number: an option code that is one compares as REDCap compares it.
                guard let number = InstrumentLogic.numeric(value) else { return nil }
                let symbol = [Clause.Operator.greater: ">", .less: "<", .atLeast: ">=", .atMost: "<="][clause.operator]
                parts.append("[\(name)] \(symbol ?? "") \(CSV.number(number))")
            default:
                return nil
            }
        }
        for group in condition.groups {
            guard let inner = branching(group, definition: definition, names: names) else { return nil }
            parts.append("(" + inner + ")")
        }
        return parts.isEmpty ? nil : parts.joined(separator: condition.mode == .all ? " and " : " or ")
    }
}
