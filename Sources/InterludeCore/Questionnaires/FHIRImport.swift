import Foundation

/// Reads a FHIR R4 Questionnaire into an instrument definition as its authors wrote it: any linkId (kept as written,
/// mapped to an id Interlude can use where needed), answer options listed or in a contained value set, visibility
/// from `enableWhen` and from `enableWhenExpression` in the FHIRPath real questionnaires use, bounds, lengths and
/// patterns. Calculated items become scores where their expression is a sum or mean of answers, and are never
/// asked, as hidden and read-only items are not. Extensions Interlude does not read are passed over. What it
/// cannot run is refused by its place in the file (`item[3].item[0]`) and in words.
public enum FHIRQuestionnaireImport {
    /// The definition and what was left out of its questions on purpose.
    public struct Result: Sendable {
        public var definition: InstrumentDefinition
        public var notes: [ImportNote]
    }

    /// Reads the questionnaire within `budget`; one that would take longer is refused as too complex.
    public static func definition(from data: Data, budget: WorkBudget = .unlimited) throws(ValidationFailure)
        -> InstrumentDefinition
    {
        try read(from: data, budget: budget).definition
    }

    public static func read(from data: Data, budget: WorkBudget = .unlimited) throws(ValidationFailure) -> Result {
        let questionnaire: FHIR.Questionnaire
        do {
            questionnaire = try JSONDecoder().decode(FHIR.Questionnaire.self, from: data)
        } catch {
            throw ValidationFailure(field: "questionnaire", code: .invalidFormat)
        }
        guard questionnaire.resourceType == "Questionnaire" else {
            throw ValidationFailure(field: "resourceType", code: .invalidValue)
        }
        var importer = Importer(
            questionnaire: questionnaire,
            primary: Language(rawValue: String((questionnaire.language ?? "en").prefix(2))) ?? .en, budget: budget)
        return try importer.read()
    }

    /// An id Interlude can use for a linkId it cannot (`/29463-7` → `29463-7`), distinct from every id in `taken`.
    static func id(for linkId: String, taken: Set<String>) -> String {
        if InstrumentDefinition.isValidID(linkId), !taken.contains(linkId) { return linkId }
        var base = String(
            linkId.map { $0.isASCII && ($0.isLetter || $0.isNumber || "_.-".contains($0)) ? $0 : "_" }
                .drop { !($0.isLetter || $0.isNumber) }.prefix(56))
        if base.isEmpty { base = "item" }
        var candidate = base
        var number = 2
        while taken.contains(candidate) || !InstrumentDefinition.isValidID(candidate) {
            candidate = "\(base)-\(number)"
            number += 1
        }
        return candidate
    }

    private struct Importer {
        let questionnaire: FHIR.Questionnaire
        let primary: Language
        let budget: WorkBudget
        var validator = FieldValidator()
        var notes: [ImportNote] = []
        /// Set once the budget is spent: nothing more is read.
        var exhausted = false
        /// Each linkId's id, and where each id stands in the file.
        var ids: [String: String] = [:]
        var places: [String: String] = [:]
        /// The questionnaire's and its items' FHIRPath variables, by `%name`.
        var variables: FHIRPathReading.Variables = [:]
        /// Calculated items found on the way, made scores once every item is known.
        var calculations: [(entry: FHIR.QuestionnaireItem, path: String, expression: String)] = []

        init(questionnaire: FHIR.Questionnaire, primary: Language, budget: WorkBudget) {
            self.questionnaire = questionnaire
            self.primary = primary
            self.budget = budget
        }

        /// Whether there is budget left for one more item; records the problem once when there is none.
        mutating func mayGoOn() -> Bool {
            guard !exhausted else { return false }
            do {
                try budget.check()
                return true
            } catch {
                exhausted = true
                validator.add("questionnaire", .tooComplex)
                return false
            }
        }

        mutating func read() throws(ValidationFailure) -> Result {
            let entries = questionnaire.item ?? []
            collect(questionnaire.extension ?? [], entries, path: "")
            var sections: [Section] = []
            var loose: [Item] = []
            for (index, entry) in entries.enumerated() where mayGoOn() {
                let path = "item[\(index)]"
                if entry.type == "group" {
                    if !loose.isEmpty {
                        sections.append(Section(id: "section-\(sections.count + 1)", items: loose))
                        loose = []
                    }
                    sections += section(from: entry, path: path)
                } else {
                    loose += items(from: entry, path: path)
                }
            }
            if !loose.isEmpty { sections.append(Section(id: "section-\(sections.count + 1)", items: loose)) }
            expandOrdinals(&sections)
            var scores: [ScoreRule] = []
            if let scoring = questionnaire.extension?.first(FHIR.URLs.scoring)?.valueString {
                do {
                    scores = try JSONDecoder().decode([ScoreRule].self, from: Data(scoring.utf8))
                } catch {
                    validator.add("extension.scoring", .invalidFormat)
                }
            }
            scores += calculatedScores(sections: sections)
            try validator.check()
            let name = questionnaire.name ?? questionnaire.title ?? questionnaire.id ?? ""
            // A canonical URL ending in the key (as Interlude's own exports have) keeps the key.
            let urlKey = questionnaire.url.flatMap { $0.split(separator: "/").last.map(String.init) }
            let key = urlKey.flatMap { InstrumentDefinition.isValidKey($0) ? $0 : nil } ?? InstrumentKeys.slug(name)
            let definition = InstrumentDefinition(
                key: key, version: Int(questionnaire.version ?? "") ?? 1,
                title: LocalizedText(fhir: questionnaire.title ?? name, questionnaire._title, primary: primary),
                description: questionnaire.description.map {
                    LocalizedText(fhir: $0, questionnaire._description, primary: primary)
                },
                source: questionnaire.publisher ?? questionnaire.url, licence: questionnaire.copyright,
                sections: sections, scores: scores)
            for problem in definition.problems() {
                validator.add(place(of: problem.field, in: definition), problem.code, limit: problem.limit)
            }
            try validator.check()
            return Result(definition: definition, notes: notes)
        }

        /// Every linkId's id and every variable, before any item is read: conditions may name items further on.
        mutating func collect(_ extensions: [FHIR.Extension], _ entries: [FHIR.QuestionnaireItem], path: String) {
            for variable in extensions where variable.url == FHIR.URLs.variable {
                guard let expression = variable.valueExpression, let name = expression.name,
                    expression.language == "text/fhirpath", let text = expression.expression,
                    let node = try? FHIRPathReading.parse(text)
                else { continue }
                variables["%" + name] = node
            }
            for (index, entry) in entries.enumerated() {
                let place = path.isEmpty ? "item[\(index)]" : "\(path).item[\(index)]"
                if ids[entry.linkId] == nil {
                    let id = FHIRQuestionnaireImport.id(for: entry.linkId, taken: Set(ids.values))
                    ids[entry.linkId] = id
                    places[id] = place
                }
                collect(entry.extension ?? [], entry.item ?? [], path: place)
            }
        }

        /// The place in the file a problem of the definition (`sections.2.items.0.options`) comes from.
        func place(of path: String, in definition: InstrumentDefinition) -> String {
            let parts = path.split(separator: ".").map(String.init)
            guard parts.count >= 2, parts[0] == "sections", let section = Int(parts[1]),
                definition.sections.indices.contains(section)
            else { return path }
            let items = definition.sections[section].items
            if parts.count >= 4, parts[2] == "items", let index = Int(parts[3]), items.indices.contains(index) {
                let item = places[items[index].id] ?? path
                return parts.count == 5 && parts[4] == "id" ? item + ".linkId" : item
            }
            return places[definition.sections[section].id] ?? path
        }

        /// A group and the groups nested in it, each as its own section.
        mutating func section(from group: FHIR.QuestionnaireItem, path: String) -> [Section] {
            if let reason = omission(group) {
                notes.append(ImportNote(place: path, kind: reason, subject: group.linkId))
                return []
            }
            var items: [Item] = []
            var nested: [Section] = []
            for (index, child) in (group.item ?? []).enumerated() where mayGoOn() {
                if child.type == "group" {
                    nested += section(from: child, path: "\(path).item[\(index)]")
                } else {
                    items += self.items(from: child, path: "\(path).item[\(index)]")
                }
            }
            let id = ids[group.linkId] ?? group.linkId
            let title = group.text.map { LocalizedText(fhir: $0, group._text, primary: primary) }
            let main = Section(
                id: id, title: title, visibleWhen: condition(group, path: path), items: items,
                linkId: id == group.linkId ? nil : group.linkId)
            return (items.isEmpty && !nested.isEmpty ? [] : [main]) + nested
        }

        /// Why an item is not asked: hidden, calculated or read-only.
        func omission(_ entry: FHIR.QuestionnaireItem) -> ImportNote.Kind? {
            let extensions = entry.extension ?? []
            if extensions.first(FHIR.URLs.hidden)?.valueBoolean == true { return .hidden }
            if entry.readOnly == true { return .readOnly }
            return nil
        }

        /// An item, followed by the questions and texts nested under it; labels and help go into the item.
        mutating func items(from entry: FHIR.QuestionnaireItem, path: String) -> [Item] {
            if let expression = entry.extension?.first(FHIR.URLs.calculatedExpression)?.valueExpression?.expression {
                calculations.append((entry, path, expression))
                return []
            }
            if let reason = omission(entry) {
                notes.append(ImportNote(place: path, kind: reason, subject: entry.linkId))
                return []
            }
            guard var item = item(from: entry, path: path) else { return [] }
            var following: [Item] = []
            for (index, child) in (entry.item ?? []).enumerated() where mayGoOn() {
                let control = (child.extension ?? []).itemControlCode
                if child.type == "display", ["lower", "upper"].contains(control) { continue }
                if child.type == "display", control == "help" || control == "flyover" {
                    item.help = child.text.map { LocalizedText(fhir: $0, child._text, primary: primary) }
                    continue
                }
                following += items(from: child, path: "\(path).item[\(index)]")
            }
            return [item] + following
        }

        mutating func item(from entry: FHIR.QuestionnaireItem, path: String) -> Item? {
            let text = LocalizedText(fhir: entry.text ?? entry.linkId, entry._text, primary: primary)
            let id = ids[entry.linkId] ?? entry.linkId
            var item = Item(
                id: id, type: .display, text: text, required: entry.required ?? false,
                linkId: id == entry.linkId ? nil : entry.linkId)
            let extensions = entry.extension ?? []
            let minimum = extensions.first(FHIR.URLs.minValue)
            let maximum = extensions.first(FHIR.URLs.maxValue)
            let labels = (entry.item ?? []).filter { $0.type == "display" }
            func label(_ control: String) -> LocalizedText? {
                labels.first { ($0.extension ?? []).itemControlCode == control }
                    .map { LocalizedText(fhir: $0.text, $0._text, primary: primary) }
            }
            switch entry.type {
            case "boolean": item.type = .boolean
            case "choice", "open-choice":
                item.type = entry.repeats == true ? .multiple : .single
                item.allowsOther = entry.type == "open-choice"
                guard let options = options(of: entry, path: path) else { return nil }
                item.options = options
            case "integer", "decimal", "quantity":
                item.min = minimum?.numberValue
                item.max = maximum?.numberValue
                item.minLabel = label("lower")
                item.maxLabel = label("upper")
                item.unit = extensions.first(FHIR.URLs.unit)?.valueCodeableConcept?.coding?.first?.display
                if extensions.itemControlCode == "slider" {
                    item.type = .slider
                    item.step = extensions.first(FHIR.URLs.sliderStep)?.numberValue
                } else if entry.type == "integer", item.min != nil, item.max != nil,
                    item.minLabel != nil || item.maxLabel != nil
                {
                    item.type = .scale
                } else {
                    item.type = .number
                    item.decimals =
                        entry.type == "integer"
                        ? 0 : extensions.first(FHIR.URLs.maxDecimalPlaces)?.valueInteger
                }
            case "string", "text", "url":
                item.type = .text
                item.multiline = entry.type == "text"
                item.maxLength = entry.maxLength
                if let regex = extensions.first(FHIR.URLs.regex)?.valueString {
                    if let format = TextFormat.allCases.first(where: { $0.fhirRegex == regex }) {
                        item.format = format
                    } else {
                        item.pattern = regex
                    }
                }
            case "date", "dateTime":
                item.type = entry.type == "date" ? .date : .dateTime
                item.earliest = minimum.flatMap { $0.valueDate ?? $0.valueDateTime }
                item.latest = maximum.flatMap { $0.valueDate ?? $0.valueDateTime }
            case "time": item.type = .time
            case "display": item.type = .display
            default:
                validator.add("\(path).type", .unsupportedItemType, detail: entry.type)
                return nil
            }
            if item.type == .display { item.required = false }
            item.visibleWhen = condition(entry, path: path)
            return item
        }

        /// The options listed in the item, or in the value set it names inside the file (`#id`).
        mutating func options(of entry: FHIR.QuestionnaireItem, path: String) -> [AnswerOption]? {
            if let listed = entry.answerOption, !listed.isEmpty {
                return listed.compactMap { option in
                    let exclusive = option.extension?.first(FHIR.URLs.optionExclusive)?.valueBoolean ?? false
                    if let coding = option.valueCoding, let code = coding.code {
                        let score = coding.ordinal ?? (option.extension ?? []).ordinal
                        return AnswerOption(
                            code: code,
                            label: LocalizedText(fhir: coding.display ?? code, coding._display, primary: primary),
                            score: score, exclusive: exclusive)
                    }
                    if let integer = option.valueInteger {
                        return AnswerOption(
                            code: String(integer), label: LocalizedText(en: String(integer)), score: Double(integer))
                    }
                    if let string = option.valueString ?? option.valueDate {
                        return AnswerOption(code: string, label: LocalizedText(en: string), exclusive: exclusive)
                    }
                    return nil
                }
            }
            guard let reference = entry.answerValueSet else {
                validator.add("\(path).answerOption", .required)
                return nil
            }
            guard reference.hasPrefix("#"),
                let valueSet = questionnaire.contained?.first(where: {
                    $0.resourceType == "ValueSet" && $0.id == String(reference.dropFirst())
                }),
                !valueSet.concepts.isEmpty
            else {
                validator.add("\(path).answerValueSet", .externalValueSet, detail: reference)
                return nil
            }
            return valueSet.concepts.compactMap { coding in
                coding.code.map { code in
                    AnswerOption(
                        code: code,
                        label: LocalizedText(fhir: coding.display ?? code, coding._display, primary: primary),
                        score: coding.ordinal)
                }
            }
        }

        /// `enableWhen` and `enableWhenExpression` (both must hold when there are both), linkIds turned into ids.
        mutating func condition(_ entry: FHIR.QuestionnaireItem, path: String) -> Condition? {
            var parts: [Condition] = []
            if let enableWhen = entry.enableWhen, !enableWhen.isEmpty {
                var clauses: [Clause] = []
                for (index, rule) in enableWhen.enumerated() {
                    guard let target = ids[rule.question] else {
                        validator.add("\(path).enableWhen[\(index)].question", .unknownField, detail: rule.question)
                        continue
                    }
                    let value: AnswerValue? =
                        if let flag = rule.answerBoolean { .bool(flag) } else if let number = rule.answerDecimal {
                            .number(number)
                        } else if let number = rule.answerInteger {
                            .number(Double(number))
                        } else if let code = rule.answerCoding?.code {
                            .text(code)
                        } else if let text = rule.answerString ?? rule.answerDate ?? rule.answerDateTime
                            ?? rule.answerTime
                        {
                            .text(text)
                        } else { nil }
                    let operators: [String: Clause.Operator] = [
                        "=": .equals, "!=": .notEquals, ">": .greater, "<": .less, ">=": .atLeast, "<=": .atMost,
                    ]
                    if rule.operator == "exists" {
                        clauses.append(Clause(item: target, .answered, value ?? .bool(true)))
                    } else if let op = operators[rule.operator] {
                        clauses.append(Clause(item: target, op, value))
                    } else {
                        validator.add(
                            "\(path).enableWhen[\(index)].operator", .unsupportedExpression, detail: rule.operator)
                    }
                }
                parts.append(Condition(entry.enableBehavior == "any" ? .any : .all, clauses))
            }
            if let expression = entry.extension?.first(FHIR.URLs.enableWhenExpression)?.valueExpression {
                let text = expression.expression ?? ""
                do {
                    guard expression.language == "text/fhirpath" else { throw FHIRPathReading.Unsupported() }
                    let read = try FHIRPathReading.condition(FHIRPathReading.parse(text), variables: variables)
                    parts.append(try mapped(read))
                } catch {
                    validator.add("\(path).extension(enableWhenExpression)", .unsupportedExpression, detail: text)
                }
            }
            guard let first = parts.first else { return nil }
            return parts.count == 1 ? first : Condition(.all, [], groups: parts)
        }

        /// The condition with the file's linkIds turned into ids; a linkId the file does not have is refused.
        func mapped(_ condition: Condition) throws(FHIRPathReading.Unsupported) -> Condition {
            var result = condition
            for index in result.clauses.indices {
                let item = result.clauses[index].item
                let marker = FHIRPathReading.ordinalMarker
                let ordinal = item.hasPrefix(marker)
                guard let id = ids[ordinal ? String(item.dropFirst(marker.count)) : item] else {
                    throw FHIRPathReading.Unsupported()
                }
                result.clauses[index].item = ordinal ? marker + id : id
            }
            for index in result.groups.indices { result.groups[index] = try mapped(result.groups[index]) }
            return result
        }

        /// Clauses on answers' ordinal values become clauses on the options with such values, once every item's
        /// options are known; an item without valued options cannot be compared so.
        mutating func expandOrdinals(_ sections: inout [Section]) {
            var options: [String: [AnswerOption]] = [:]
            for section in sections {
                for item in section.items { options[item.id] = item.options ?? section.options ?? [] }
            }
            func expand(_ condition: Condition) -> Condition? {
                var result = Condition(condition.mode, [], groups: [])
                for clause in condition.clauses {
                    guard clause.item.hasPrefix(FHIRPathReading.ordinalMarker) else {
                        result.clauses.append(clause)
                        continue
                    }
                    let id = String(clause.item.dropFirst(FHIRPathReading.ordinalMarker.count))
                    guard let group = FHIRPathReading.options(for: clause, id: id, options: options[id] ?? []) else {
                        return nil
                    }
                    if group.mode == result.mode || group.clauses.count == 1 {
                        result.clauses += group.clauses
                    } else {
                        result.groups.append(group)
                    }
                }
                for group in condition.groups {
                    guard let expanded = expand(group) else { return nil }
                    result.groups.append(expanded)
                }
                return result.clauses.isEmpty && result.groups.count == 1 ? result.groups[0] : result
            }
            for sectionIndex in sections.indices {
                for itemIndex in sections[sectionIndex].items.indices {
                    guard let condition = sections[sectionIndex].items[itemIndex].visibleWhen else { continue }
                    if let expanded = expand(condition) {
                        sections[sectionIndex].items[itemIndex].visibleWhen = expanded
                    } else {
                        let id = sections[sectionIndex].items[itemIndex].id
                        validator.add(places[id] ?? id, .unsupportedExpression, detail: "ordinal()")
                    }
                }
            }
        }

        /// Calculated items as scores where their expression sums or averages answers that are asked; the others
        /// are noted and left out. Never asked either way.
        mutating func calculatedScores(sections: [Section]) -> [ScoreRule] {
            let asked = Set(sections.flatMap(\.items).map(\.id))
            // What "every answer's ordinal value" adds up: the choices whose options carry values.
            let ordinals = sections.flatMap { section in
                section.items.filter { item in
                    item.type == .single
                        && !(item.options ?? section.options ?? []).isEmpty
                        && (item.options ?? section.options ?? []).allSatisfy { $0.score != nil }
                }.map(\.id)
            }
            var scores: [ScoreRule] = []
            for (entry, path, expression) in calculations {
                let terms = (try? FHIRPathReading.parse(expression)).flatMap {
                    FHIRPathReading.aggregate($0, variables: variables)
                }
                let items =
                    terms?.1 == [FHIRPathReading.everyAnswer] ? ordinals : (terms?.1 ?? []).compactMap { ids[$0] }
                guard let (method, linkIds) = terms, !items.isEmpty,
                    items.count == linkIds.count || linkIds == [FHIRPathReading.everyAnswer],
                    items.allSatisfy(asked.contains), Set(items).count == items.count
                else {
                    notes.append(ImportNote(place: path, kind: .calculationLeftOut, subject: entry.linkId))
                    continue
                }
                notes.append(ImportNote(place: path, kind: .calculationAsScore, subject: entry.linkId))
                scores.append(
                    ScoreRule(
                        id: ids[entry.linkId] ?? entry.linkId,
                        title: LocalizedText(fhir: entry.text ?? entry.linkId, entry._text, primary: primary),
                        method: method, items: items))
            }
            return scores
        }
    }
}

extension FHIR.Coding {
    /// The value a coding adds to a score: its `ordinalValue` (or R5's `itemWeight`).
    var ordinal: Double? { (self.extension ?? []).ordinal }
}

extension Array where Element == FHIR.Extension {
    var ordinal: Double? { (first(FHIR.URLs.ordinalValue) ?? first(FHIR.URLs.itemWeight))?.numberValue }
}

/// Turning names into instrument keys.
public enum InstrumentKeys {
    /// `"Mini Tinnitus Questionnaire"` → `mini-tinnitus-questionnaire`.
    public static func slug(_ name: String) -> String {
        var result = ""
        var lastWasDash = true
        for scalar in name.lowercased().folding(options: .diacriticInsensitive, locale: nil).unicodeScalars {
            if scalar.isASCII, CharacterSet.alphanumerics.contains(scalar) {
                result.unicodeScalars.append(scalar)
                lastWasDash = false
            } else if !lastWasDash {
                result.append("-")
                lastWasDash = true
            }
        }
        while result.hasSuffix("-") { result.removeLast() }
        return String(result.prefix(InstrumentDefinition.keyMaxLength))
    }
}
