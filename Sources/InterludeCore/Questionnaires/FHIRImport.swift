import Foundation

/// Reads a FHIR R4 Questionnaire into an instrument definition. Scoring comes back only from Interlude's own
/// exports; anything FHIR can express that Interlude cannot run is refused, naming the item.
public enum FHIRQuestionnaireImport {
    /// Reads the questionnaire within `budget`; one that would take longer is refused as too complex.
    public static func definition(from data: Data, budget: WorkBudget = .unlimited) throws(ValidationFailure)
        -> InstrumentDefinition
    {
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
            primary: Language(rawValue: String((questionnaire.language ?? "en").prefix(2))) ?? .en, budget: budget)
        return try importer.definition(questionnaire)
    }

    private struct Importer {
        let primary: Language
        let budget: WorkBudget
        var validator = FieldValidator()
        /// Set once the budget is spent: nothing more is read.
        var exhausted = false

        init(primary: Language, budget: WorkBudget) {
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

        mutating func definition(_ questionnaire: FHIR.Questionnaire) throws(ValidationFailure) -> InstrumentDefinition
        {
            let name = questionnaire.name ?? questionnaire.title ?? questionnaire.id ?? ""
            var sections: [Section] = []
            var loose: [Item] = []
            for (index, entry) in (questionnaire.item ?? []).enumerated() where mayGoOn() {
                if entry.type == "group" {
                    if !loose.isEmpty {
                        sections.append(Section(id: "section-\(sections.count + 1)", items: loose))
                        loose = []
                    }
                    sections += section(from: entry, path: "item.\(index)")
                } else if let item = item(from: entry, path: "item.\(index)") {
                    loose.append(item)
                }
            }
            if !loose.isEmpty { sections.append(Section(id: "section-\(sections.count + 1)", items: loose)) }
            var scores: [ScoreRule] = []
            if let scoring = questionnaire.extension?.first(FHIR.URLs.scoring)?.valueString {
                do {
                    scores = try JSONDecoder().decode([ScoreRule].self, from: Data(scoring.utf8))
                } catch {
                    validator.add("extension.scoring", .invalidFormat)
                }
            }
            try validator.check()
            // A canonical URL ending in the key (as Interlude's own exports have) keeps the key.
            let urlKey = questionnaire.url.flatMap { $0.split(separator: "/").last.map(String.init) }
            let key = urlKey.flatMap { InstrumentDefinition.isValidKey($0) ? $0 : nil } ?? InstrumentKeys.slug(name)
            return InstrumentDefinition(
                key: key, version: Int(questionnaire.version ?? "") ?? 1,
                title: LocalizedText(fhir: questionnaire.title ?? name, questionnaire._title, primary: primary),
                description: questionnaire.description.map {
                    LocalizedText(fhir: $0, questionnaire._description, primary: primary)
                },
                source: questionnaire.publisher ?? questionnaire.url, licence: questionnaire.copyright,
                sections: sections, scores: scores)
        }

        /// A group and the groups nested in it, each as its own section.
        mutating func section(from group: FHIR.QuestionnaireItem, path: String) -> [Section] {
            var items: [Item] = []
            var nested: [Section] = []
            for (index, child) in (group.item ?? []).enumerated() where mayGoOn() {
                if child.type == "group" {
                    nested += section(from: child, path: "\(path).item.\(index)")
                } else if let item = item(from: child, path: "\(path).item.\(index)") {
                    items.append(item)
                }
            }
            let title = group.text.map { LocalizedText(fhir: $0, group._text, primary: primary) }
            let main = Section(
                id: group.linkId, title: title, visibleWhen: condition(group, path: path),
                items: items.isEmpty ? [] : items)
            return (items.isEmpty && !nested.isEmpty ? [] : [main]) + nested
        }

        mutating func item(from entry: FHIR.QuestionnaireItem, path: String) -> Item? {
            let text = LocalizedText(fhir: entry.text ?? entry.linkId, entry._text, primary: primary)
            var item = Item(id: entry.linkId, type: .display, text: text, required: entry.required ?? false)
            let extensions = entry.extension ?? []
            let minimum = extensions.first(FHIR.URLs.minValue)?.numberValue
            let maximum = extensions.first(FHIR.URLs.maxValue)?.numberValue
            let labels = (entry.item ?? []).filter { $0.type == "display" }
            func label(_ control: String) -> LocalizedText? {
                labels.first { ($0.extension ?? []).itemControlCode == control }
                    .map { LocalizedText(fhir: $0.text, $0._text, primary: primary) }
            }
            switch entry.type {
            case "boolean": item.type = .boolean
            case "choice", "open-choice":
                item.type = entry.repeats == true ? .multiple : .single
                guard let answerOptions = entry.answerOption, !answerOptions.isEmpty else {
                    validator.add("\(path).answerOption", entry.answerValueSet == nil ? .required : .notAllowed)
                    return nil
                }
                item.options = answerOptions.compactMap { option in
                    let exclusive = option.extension?.first(FHIR.URLs.optionExclusive)?.valueBoolean ?? false
                    if let coding = option.valueCoding, let code = coding.code {
                        let score =
                            (coding.extension ?? []).first(FHIR.URLs.ordinalValue)?.numberValue
                            ?? (option.extension ?? []).first(FHIR.URLs.itemWeight)?.numberValue
                            ?? (option.extension ?? []).first(FHIR.URLs.ordinalValue)?.numberValue
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
            case "integer", "decimal":
                item.min = minimum
                item.max = maximum
                item.minLabel = label("lower")
                item.maxLabel = label("upper")
                if extensions.itemControlCode == "slider" {
                    item.type = .slider
                    item.step = extensions.first(FHIR.URLs.sliderStep)?.numberValue
                } else if entry.type == "integer", minimum != nil, maximum != nil,
                    item.minLabel != nil || item.maxLabel != nil
                {
                    item.type = .scale
                } else {
                    item.type = .number
                    item.decimals =
                        entry.type == "integer"
                        ? 0 : extensions.first(FHIR.URLs.maxDecimalPlaces)?.valueInteger
                }
            case "string", "text":
                item.type = .text
                item.multiline = entry.type == "text"
                item.maxLength = entry.maxLength
            case "date": item.type = .date
            case "time": item.type = .time
            case "dateTime": item.type = .dateTime
            case "display": item.type = .display
            default:
                validator.add("\(path).type", .notAllowed)
                return nil
            }
            if item.type == .display { item.required = false }
            item.visibleWhen = condition(entry, path: path)
            return item
        }

        mutating func condition(_ entry: FHIR.QuestionnaireItem, path: String) -> Condition? {
            guard let enableWhen = entry.enableWhen, !enableWhen.isEmpty else { return nil }
            var clauses: [Clause] = []
            for (index, rule) in enableWhen.enumerated() {
                let value: AnswerValue? =
                    if let flag = rule.answerBoolean { .bool(flag) } else if let number = rule.answerDecimal {
                        .number(number)
                    } else if let number = rule.answerInteger {
                        .number(Double(number))
                    } else if let code = rule.answerCoding?.code {
                        .text(code)
                    } else if let text = rule.answerString ?? rule.answerDate ?? rule.answerDateTime ?? rule.answerTime
                    {
                        .text(text)
                    } else { nil }
                switch rule.operator {
                case "exists": clauses.append(Clause(item: rule.question, .answered, value ?? .bool(true)))
                case "=": clauses.append(Clause(item: rule.question, .equals, value))
                case "!=": clauses.append(Clause(item: rule.question, .notEquals, value))
                case ">": clauses.append(Clause(item: rule.question, .greater, value))
                case "<": clauses.append(Clause(item: rule.question, .less, value))
                case ">=": clauses.append(Clause(item: rule.question, .atLeast, value))
                case "<=": clauses.append(Clause(item: rule.question, .atMost, value))
                default: validator.add("\(path).enableWhen.\(index).operator", .notAllowed)
                }
            }
            return Condition(entry.enableBehavior == "any" ? .any : .all, clauses)
        }
    }
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
