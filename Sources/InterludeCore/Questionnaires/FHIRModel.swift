import Foundation

/// The part of FHIR R4 Questionnaire and QuestionnaireResponse that Interlude reads and writes.
/// Unknown fields are ignored on import; nil fields are left out on export.
public enum FHIR {
    public struct Questionnaire: Codable, Sendable {
        public var resourceType = "Questionnaire"
        public var id: String?
        public var url: String?
        public var version: String?
        public var name: String?
        public var title: String?
        public var _title: PrimitiveExtension?
        public var status: String?
        public var language: String?
        public var description: String?
        public var _description: PrimitiveExtension?
        public var copyright: String?
        public var publisher: String?
        public var `extension`: [Extension]?
        /// Resources kept in the file, such as the value sets its answers come from (`answerValueSet: "#id"`).
        public var contained: [ContainedResource]?
        public var item: [QuestionnaireItem]?
    }

    /// A resource contained in a questionnaire; only value sets are read, anything else is carried past.
    public struct ContainedResource: Codable, Sendable {
        public var resourceType: String?
        public var id: String?
        public var compose: ValueSetCompose?
        public var expansion: ValueSetExpansion?

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            resourceType = try? container.decodeIfPresent(String.self, forKey: .resourceType)
            id = try? container.decodeIfPresent(String.self, forKey: .id)
            compose = try? container.decodeIfPresent(ValueSetCompose.self, forKey: .compose)
            expansion = try? container.decodeIfPresent(ValueSetExpansion.self, forKey: .expansion)
        }

        /// The value set's codes in order: its expansion, else the concepts its composition lists.
        public var concepts: [Coding] {
            if let contains = expansion?.contains, !contains.isEmpty { return contains }
            return (compose?.include ?? []).flatMap { include in
                (include.concept ?? []).map { concept in
                    var coding = concept
                    coding.system = coding.system ?? include.system
                    return coding
                }
            }
        }
    }

    public struct ValueSetCompose: Codable, Sendable {
        public struct Include: Codable, Sendable {
            public var system: String?
            public var concept: [Coding]?
        }

        public var include: [Include]?
    }

    public struct ValueSetExpansion: Codable, Sendable {
        public var contains: [Coding]?
    }

    public struct QuestionnaireItem: Codable, Sendable {
        public var linkId: String
        public var text: String?
        public var _text: PrimitiveExtension?
        public var type: String
        public var required: Bool?
        public var repeats: Bool?
        public var readOnly: Bool?
        public var maxLength: Int?
        public var enableWhen: [EnableWhen]?
        public var enableBehavior: String?
        public var answerOption: [AnswerOption]?
        public var answerValueSet: String?
        public var `extension`: [Extension]?
        public var item: [QuestionnaireItem]?

        public init(linkId: String, text: String?, type: String) {
            self.linkId = linkId
            self.text = text
            self.type = type
        }
    }

    public struct EnableWhen: Codable, Sendable {
        public var question: String
        public var `operator`: String
        public var answerBoolean: Bool?
        public var answerDecimal: Double?
        public var answerInteger: Int?
        public var answerDate: String?
        public var answerDateTime: String?
        public var answerTime: String?
        public var answerString: String?
        public var answerCoding: Coding?

        public init(question: String, operator: String) {
            self.question = question
            self.operator = `operator`
        }
    }

    public struct AnswerOption: Codable, Sendable {
        public var valueCoding: Coding?
        public var valueInteger: Int?
        public var valueString: String?
        public var valueDate: String?
        public var `extension`: [Extension]?

        public init() {}
    }

    public struct Coding: Codable, Sendable {
        public var system: String?
        public var code: String?
        public var display: String?
        public var _display: PrimitiveExtension?
        public var `extension`: [Extension]?

        public init(system: String? = nil, code: String?, display: String?) {
            self.system = system
            self.code = code
            self.display = display
        }
    }

    public struct CodeableConcept: Codable, Sendable {
        public var coding: [Coding]?
        public var text: String?

        public init(coding: [Coding]?) {
            self.coding = coding
        }
    }

    /// An extension with the value types Interlude uses.
    public struct Extension: Codable, Sendable {
        public var url: String
        public var valueBoolean: Bool?
        public var valueInteger: Int?
        public var valueDecimal: Double?
        public var valueString: String?
        public var valueCode: String?
        public var valueDate: String?
        public var valueDateTime: String?
        public var valueCodeableConcept: CodeableConcept?
        public var valueExpression: Expression?
        public var `extension`: [Extension]?

        public init(url: String) {
            self.url = url
        }

        /// Every value read as far as it has the type Interlude expects: an extension Interlude does not read, or
        /// one with a value of another type, is carried past, never a reason to refuse the file.
        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            url = (try? container.decodeIfPresent(String.self, forKey: .url)) ?? ""
            valueBoolean = try? container.decodeIfPresent(Bool.self, forKey: .valueBoolean)
            valueInteger = try? container.decodeIfPresent(Int.self, forKey: .valueInteger)
            valueDecimal = try? container.decodeIfPresent(Double.self, forKey: .valueDecimal)
            valueString = try? container.decodeIfPresent(String.self, forKey: .valueString)
            valueCode = try? container.decodeIfPresent(String.self, forKey: .valueCode)
            valueDate = try? container.decodeIfPresent(String.self, forKey: .valueDate)
            valueDateTime = try? container.decodeIfPresent(String.self, forKey: .valueDateTime)
            valueCodeableConcept = try? container.decodeIfPresent(CodeableConcept.self, forKey: .valueCodeableConcept)
            valueExpression = try? container.decodeIfPresent(Expression.self, forKey: .valueExpression)
            `extension` = try? container.decodeIfPresent([Extension].self, forKey: .extension)
        }
    }

    /// An expression in a language such as FHIRPath, as SDC's calculated and enable-when extensions carry.
    public struct Expression: Codable, Sendable {
        public var name: String?
        public var language: String
        public var expression: String?

        public init(language: String, expression: String?) {
            self.language = language
            self.expression = expression
        }
    }

    /// The `_text`-style companion of a primitive, carrying translations.
    public struct PrimitiveExtension: Codable, Sendable {
        public var `extension`: [Extension]?
    }

    public struct QuestionnaireResponse: Codable, Sendable {
        public var resourceType = "QuestionnaireResponse"
        public var id: String?
        public var questionnaire: String?
        public var status: String
        public var authored: String?
        public var subject: Reference?
        public var item: [ResponseItem]?
    }

    public struct Reference: Codable, Sendable {
        public var identifier: Identifier?
        public var display: String?
        /// A resource in the same bundle or file: `Observation/<id>`.
        public var reference: String? = nil
    }

    public struct Identifier: Codable, Sendable {
        public var system: String?
        public var value: String?

        public init(system: String?, value: String?) {
            self.system = system
            self.value = value
        }
    }

    public struct ResponseItem: Codable, Sendable {
        public var linkId: String
        public var text: String?
        public var answer: [ResponseAnswer]?
        public var item: [ResponseItem]?
    }

    public struct ResponseAnswer: Codable, Sendable {
        public var valueBoolean: Bool?
        public var valueDecimal: Double?
        public var valueInteger: Int?
        public var valueDate: String?
        public var valueDateTime: String?
        public var valueTime: String?
        public var valueString: String?
        public var valueCoding: Coding?

        public init() {}
    }

    /// Extension URLs from the FHIR core and the Structured Data Capture guide.
    public enum URLs {
        public static let translation = "http://hl7.org/fhir/StructureDefinition/translation"
        public static let minValue = "http://hl7.org/fhir/StructureDefinition/minValue"
        public static let maxValue = "http://hl7.org/fhir/StructureDefinition/maxValue"
        public static let itemControl = "http://hl7.org/fhir/StructureDefinition/questionnaire-itemControl"
        public static let itemControlSystem = "http://hl7.org/fhir/questionnaire-item-control"
        public static let sliderStep = "http://hl7.org/fhir/StructureDefinition/questionnaire-sliderStepValue"
        public static let optionExclusive = "http://hl7.org/fhir/StructureDefinition/questionnaire-optionExclusive"
        public static let ordinalValue = "http://hl7.org/fhir/StructureDefinition/ordinalValue"
        public static let itemWeight = "http://hl7.org/fhir/StructureDefinition/itemWeight"
        public static let maxDecimalPlaces = "http://hl7.org/fhir/StructureDefinition/maxDecimalPlaces"
        public static let unit = "http://hl7.org/fhir/StructureDefinition/questionnaire-unit"
        public static let regex = "http://hl7.org/fhir/StructureDefinition/regex"
        public static let hidden = "http://hl7.org/fhir/StructureDefinition/questionnaire-hidden"
        public static let variable = "http://hl7.org/fhir/StructureDefinition/variable"
        public static let calculatedExpression =
            "http://hl7.org/fhir/uv/sdc/StructureDefinition/sdc-questionnaire-calculatedExpression"
        public static let enableWhenExpression =
            "http://hl7.org/fhir/uv/sdc/StructureDefinition/sdc-questionnaire-enableWhenExpression"
        /// Interlude's scoring rules and bands, so an export can be imported again without losing them.
        public static let scoring = "urn:interlude:fhir:scoring"
    }
}

extension FHIR.Extension {
    static func translation(_ language: Language, _ content: String) -> FHIR.Extension {
        var outer = FHIR.Extension(url: FHIR.URLs.translation)
        var lang = FHIR.Extension(url: "lang")
        lang.valueCode = language.rawValue
        var text = FHIR.Extension(url: "content")
        text.valueString = content
        outer.extension = [lang, text]
        return outer
    }

    static func itemControl(_ code: String) -> FHIR.Extension {
        var control = FHIR.Extension(url: FHIR.URLs.itemControl)
        control.valueCodeableConcept = FHIR.CodeableConcept(
            coding: [FHIR.Coding(system: FHIR.URLs.itemControlSystem, code: code, display: nil)])
        return control
    }

    static func number(_ url: String, _ value: Double, integer: Bool) -> FHIR.Extension {
        var ext = FHIR.Extension(url: url)
        if integer { ext.valueInteger = value.clampedInt } else { ext.valueDecimal = value }
        return ext
    }

    var numberValue: Double? { valueDecimal ?? valueInteger.map(Double.init) }
}

extension Array where Element == FHIR.Extension {
    func first(_ url: String) -> FHIR.Extension? { first { $0.url == url } }

    var itemControlCode: String? {
        first(FHIR.URLs.itemControl)?.valueCodeableConcept?.coding?.first?.code
    }
}

extension LocalizedText {
    /// The text in the primary language plus a `_text` carrying the other languages as translations.
    func fhir(primary: Language) -> (String, FHIR.PrimitiveExtension?) {
        let others = Language.allCases.filter { $0 != primary }.compactMap { language in
            values[language].map { FHIR.Extension.translation(language, $0) }
        }
        return (text(primary), others.isEmpty ? nil : FHIR.PrimitiveExtension(extension: others))
    }

    /// A text and its translations read back from FHIR.
    init(fhir text: String?, _ companion: FHIR.PrimitiveExtension?, primary: Language) {
        var values: [Language: String] = [:]
        if let text { values[primary] = text }
        for translation in companion?.extension ?? [] where translation.url == FHIR.URLs.translation {
            let parts = translation.extension ?? []
            if let code = parts.first("lang")?.valueCode, let language = Language(rawValue: String(code.prefix(2))),
                let content = parts.first("content")?.valueString
            {
                values[language] = content
            }
        }
        self.init(values)
    }
}
