import Foundation

extension InstrumentDefinition {
    /// This version as a FHIR R4 Questionnaire: sections become groups, conditions `enableWhen`, answer scores
    /// `ordinalValue`, slider and scale ends SDC lower/upper labels; scoring rides along in an Interlude extension.
    public func fhirQuestionnaire(canonicalURL: String, primary: Language = .en) -> FHIR.Questionnaire {
        var questionnaire = FHIR.Questionnaire()
        questionnaire.id = "\(key)-\(version)"
        questionnaire.url = canonicalURL
        questionnaire.version = String(version)
        questionnaire.name = key.split(separator: "-").map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined()
            .filter { $0.isLetter || $0.isNumber }
        (questionnaire.title, questionnaire._title) = title.fhir(primary: primary)
        if let description {
            let (text, translations) = description.fhir(primary: primary)
            questionnaire.description = text
            questionnaire._description = translations
        }
        questionnaire.copyright = licence
        questionnaire.publisher = source
        questionnaire.status = "active"
        questionnaire.language = primary.rawValue
        // Sorted keys: the same instrument always exports the same document.
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        if !scores.isEmpty, let data = try? encoder.encode(scores) {
            var scoring = FHIR.Extension(url: FHIR.URLs.scoring)
            scoring.valueString = String(decoding: data, as: UTF8.self)
            questionnaire.extension = [scoring]
        }
        questionnaire.item = sections.map { section in
            var group = FHIR.QuestionnaireItem(linkId: section.id, text: nil, type: "group")
            if let sectionTitle = section.title ?? section.description {
                (group.text, group._text) = sectionTitle.fhir(primary: primary)
            }
            if let condition = section.visibleWhen { apply(condition, to: &group) }
            group.item = section.items.map { fhirItem($0, primary: primary) }
            return group
        }
        return questionnaire
    }

    private func fhirItem(_ item: Item, primary: Language) -> FHIR.QuestionnaireItem {
        var result = FHIR.QuestionnaireItem(linkId: item.id, text: nil, type: Self.fhirType(of: item))
        (result.text, result._text) = item.text.fhir(primary: primary)
        if item.type.takesAnswer && item.required { result.required = true }
        var extensions: [FHIR.Extension] = []
        switch item.type {
        case .single, .multiple:
            if item.type == .multiple { result.repeats = true }
            result.answerOption = options(of: item).map { option in
                var answer = FHIR.AnswerOption()
                var coding = FHIR.Coding(code: option.code, display: nil)
                (coding.display, coding._display) = option.label.fhir(primary: primary)
                if let score = option.score {
                    var ordinal = FHIR.Extension(url: FHIR.URLs.ordinalValue)
                    ordinal.valueDecimal = score
                    coding.extension = [ordinal]
                }
                answer.valueCoding = coding
                if option.exclusive {
                    var exclusive = FHIR.Extension(url: FHIR.URLs.optionExclusive)
                    exclusive.valueBoolean = true
                    answer.extension = [exclusive]
                }
                return answer
            }
        case .scale, .slider, .number:
            let integer = result.type == "integer"
            if let min = item.min { extensions.append(.number(FHIR.URLs.minValue, min, integer: integer)) }
            if let max = item.max { extensions.append(.number(FHIR.URLs.maxValue, max, integer: integer)) }
            if item.type == .slider {
                extensions.append(.itemControl("slider"))
                if let step = item.step { extensions.append(.number(FHIR.URLs.sliderStep, step, integer: true)) }
            }
            if item.type == .number, let decimals = item.decimals, decimals > 0 {
                extensions.append(.number(FHIR.URLs.maxDecimalPlaces, Double(decimals), integer: true))
            }
            var labels: [FHIR.QuestionnaireItem] = []
            for (suffix, control, label) in [("lower", "lower", item.minLabel), ("upper", "upper", item.maxLabel)] {
                guard let label else { continue }
                var display = FHIR.QuestionnaireItem(linkId: "\(item.id).\(suffix)", text: nil, type: "display")
                (display.text, display._text) = label.fhir(primary: primary)
                display.extension = [.itemControl(control)]
                labels.append(display)
            }
            if !labels.isEmpty { result.item = labels }
        case .text:
            result.maxLength = item.maxLength ?? Item.defaultTextLimit
            if let format = item.format {
                var regex = FHIR.Extension(url: FHIR.URLs.regex)
                regex.valueString = format.fhirRegex
                extensions.append(regex)
            }
        case .date, .dateTime:
            for (url, bound) in [(FHIR.URLs.minValue, item.earliest), (FHIR.URLs.maxValue, item.latest)] {
                guard let bound else { continue }
                var ext = FHIR.Extension(url: url)
                if item.type == .date {
                    ext.valueDate = bound
                } else {
                    ext.valueDateTime = bound
                }
                extensions.append(ext)
            }
        case .boolean, .time, .display:
            break
        }
        if !extensions.isEmpty { result.extension = extensions }
        if let condition = item.visibleWhen { apply(condition, to: &result) }
        return result
    }

    static func fhirType(of item: Item) -> String {
        switch item.type {
        case .single, .multiple: return "choice"
        case .boolean: return "boolean"
        case .scale: return "integer"
        case .slider: return item.step.map { $0 == $0.rounded() } ?? false ? "integer" : "decimal"
        case .number: return (item.decimals ?? 1) == 0 ? "integer" : "decimal"
        case .text: return item.multiline ? "text" : "string"
        case .date: return "date"
        case .time: return "time"
        case .dateTime: return "dateTime"
        case .display: return "display"
        }
    }

    private func apply(_ condition: Condition, to item: inout FHIR.QuestionnaireItem) {
        guard condition.groups.isEmpty else {
            var expression = FHIR.Extension(url: FHIR.URLs.enableWhenExpression)
            expression.valueExpression = FHIR.Expression(language: "text/fhirpath", expression: fhirPath(condition))
            item.extension = (item.extension ?? []) + [expression]
            return
        }
        item.enableBehavior = condition.clauses.count > 1 ? condition.mode.rawValue : nil
        item.enableWhen = condition.clauses.map { clause in
            var enable = FHIR.EnableWhen(question: clause.item, operator: Self.fhirOperator(clause.operator))
            if clause.operator == .answered {
                if case .bool(let expected) = clause.value {
                    enable.answerBoolean = expected
                } else {
                    enable.answerBoolean = true
                }
                return enable
            }
            guard let target = self.item(clause.item), let value = clause.value else { return enable }
            switch (target.type, value) {
            case (.boolean, .bool(let flag)):
                enable.answerBoolean = flag
            case (.single, _), (.multiple, _):
                let code = value.text ?? value.number.map { $0.plainText() } ?? ""
                enable.answerCoding = FHIR.Coding(code: code, display: nil)
            case (.scale, .number(let number)), (.slider, .number(let number)), (.number, .number(let number)):
                if Self.fhirType(of: target) == "integer" {
                    enable.answerInteger = number.clampedInt
                } else {
                    enable.answerDecimal = number
                }
            case (.date, .text(let text)): enable.answerDate = text
            case (.dateTime, .text(let text)): enable.answerDateTime = text
            case (.time, .text(let text)): enable.answerTime = Self.fhirTime(text)
            default:
                enable.answerString = value.text
            }
            return enable
        }
    }

    static func fhirOperator(_ operator: Clause.Operator) -> String {
        switch `operator` {
        case .equals: return "="
        case .notEquals: return "!="
        case .greater: return ">"
        case .less: return "<"
        case .atLeast: return ">="
        case .atMost: return "<="
        case .answered: return "exists"
        }
    }

    /// FHIR times carry seconds.
    static func fhirTime(_ text: String) -> String {
        text.count == 5 ? text + ":00" : text
    }

    /// A response to this version as a FHIR R4 QuestionnaireResponse, grouped by section like the questionnaire.
    public func fhirResponse(
        id: String, answers: Answers, questionnaireURL: String, authored: Date, subject: FHIR.Identifier?,
        primary: Language = .en
    ) -> FHIR.QuestionnaireResponse {
        let visible = InstrumentLogic(self).visibility(answers)
        var response = FHIR.QuestionnaireResponse(status: "completed")
        response.id = id
        response.questionnaire = "\(questionnaireURL)|\(version)"
        // A format style, not a formatter: making an ISO8601DateFormatter costs more than the rest of the mapping.
        response.authored = authored.formatted(.iso8601)
        response.subject = subject.map { FHIR.Reference(identifier: $0) }
        let groups: [FHIR.ResponseItem] = sections.compactMap { section in
            guard visible.sections.contains(section.id) else { return nil }
            let items: [FHIR.ResponseItem] = section.items.compactMap { item in
                guard item.type.takesAnswer, visible.items.contains(item.id),
                    InstrumentLogic.isAnswered(answers[item.id]), let answer = answers[item.id]
                else { return nil }
                return FHIR.ResponseItem(
                    linkId: item.id, text: item.text.text(primary),
                    answer: fhirAnswers(answer, for: item, primary: primary))
            }
            guard !items.isEmpty else { return nil }
            return FHIR.ResponseItem(linkId: section.id, text: section.title?.text(primary), item: items)
        }
        response.item = groups.isEmpty ? nil : groups
        return response
    }

    private func fhirAnswers(_ value: AnswerValue, for item: Item, primary: Language) -> [FHIR.ResponseAnswer] {
        func coding(_ code: String) -> FHIR.ResponseAnswer {
            var answer = FHIR.ResponseAnswer()
            let label = options(of: item).first { $0.code == code }?.label.text(primary)
            answer.valueCoding = FHIR.Coding(code: code, display: label)
            return answer
        }
        var answer = FHIR.ResponseAnswer()
        switch (item.type, value) {
        case (.single, .text(let code)): return [coding(code)]
        case (.multiple, .list(let codes)): return codes.map(coding)
        case (.boolean, .bool(let flag)): answer.valueBoolean = flag
        case (.scale, .number(let number)), (.slider, .number(let number)), (.number, .number(let number)):
            if Self.fhirType(of: item) == "integer" {
                answer.valueInteger = number.clampedInt
            } else {
                answer.valueDecimal = number
            }
        case (.text, .text(let text)): answer.valueString = text
        case (.date, .text(let text)): answer.valueDate = text
        case (.time, .text(let text)): answer.valueTime = Self.fhirTime(text)
        case (.dateTime, .text(let text)): answer.valueDateTime = text
        default: return []
        }
        return [answer]
    }
}

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
