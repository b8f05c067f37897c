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
            var group = FHIR.QuestionnaireItem(linkId: section.linkId ?? section.id, text: nil, type: "group")
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
        var result = FHIR.QuestionnaireItem(linkId: item.fhirLinkId, text: nil, type: Self.fhirType(of: item))
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
                var display = FHIR.QuestionnaireItem(
                    linkId: "\(item.fhirLinkId).\(suffix)", text: nil, type: "display")
                (display.text, display._text) = label.fhir(primary: primary)
                display.extension = [.itemControl(control)]
                labels.append(display)
            }
            if !labels.isEmpty { result.item = labels }
        case .text:
            result.maxLength = item.maxLength ?? Item.defaultTextLimit
            if let pattern = item.format?.fhirRegex ?? item.pattern {
                var regex = FHIR.Extension(url: FHIR.URLs.regex)
                regex.valueString = pattern
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
        case .single, .multiple: return item.allowsOther ? "open-choice" : "choice"
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
            var enable = FHIR.EnableWhen(
                question: self.item(clause.item)?.fhirLinkId ?? clause.item,
                operator: Self.fhirOperator(clause.operator))
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
                    linkId: item.fhirLinkId, text: item.text.text(primary),
                    answer: fhirAnswers(answer, for: item, primary: primary))
            }
            guard !items.isEmpty else { return nil }
            return FHIR.ResponseItem(
                linkId: section.linkId ?? section.id, text: section.title?.text(primary), item: items)
        }
        response.item = groups.isEmpty ? nil : groups
        return response
    }

    private func fhirAnswers(_ value: AnswerValue, for item: Item, primary: Language) -> [FHIR.ResponseAnswer] {
        func coding(_ code: String) -> FHIR.ResponseAnswer {
            var answer = FHIR.ResponseAnswer()
            guard let option = options(of: item).first(where: { $0.code == code }) else {
                // An answer in the person's own words, as open-choice answers it.
                answer.valueString = code
                return answer
            }
            answer.valueCoding = FHIR.Coding(code: code, display: option.label.text(primary))
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

extension Item {
    /// The linkId this item has in FHIR: the one it was imported with, else its id.
    public var fhirLinkId: String { linkId ?? id }
}
