import Foundation

/// One problem with one input field, named by its JSON property so a client can place the message next to it.
public struct FieldError: Equatable, Hashable, Sendable, Codable {
    /// The JSON property the problem is about, e.g. `email` or `password`.
    public var field: String
    /// A stable machine-readable reason, e.g. `required`, `tooLong`, `invalidFormat`.
    public var code: Code
    /// Extra values a message may need, e.g. the maximum length.
    public var limit: Int?
    /// What the problem is about, quoted from the input where the field alone does not say it: the branching logic
    /// or the field type of an imported file that Interlude cannot read.
    public var detail: String?

    public init(field: String, code: Code, limit: Int? = nil, detail: String? = nil) {
        self.field = field
        self.code = code
        self.limit = limit
        self.detail = detail
    }

    public enum Code: String, Sendable, Codable, CaseIterable {
        case required
        case tooShort
        case tooLong
        case invalidFormat
        case invalidValue
        case notAllowed
        case sameAsEmail
        case taken
        case expired
        case alreadyUsed
        case mismatch
        case outdated
        case controlCharacter
        // definitions and responses
        case duplicate
        case unknown
        case cycle
        case overlap
        case gap
        case incomplete
        case notVisible
        case wrongType
        case outOfRange
        case notAnOption
        case exclusive
        case afterDeadline
        case outsideWindow
        /// An upload too large or intricate to read within its budget.
        case tooComplex
        // imported questionnaires: what a file says that Interlude cannot do, quoted in `detail`
        case unsupportedFieldType
        case unsupportedLogic
        case longitudinalLogic
        case otherForm
        case unknownField
        case notAsked
        case choicesFormat
        case unsupportedItemType
        case externalValueSet
        case unsupportedExpression
    }
}

/// Thrown when input fails validation; carries every field problem found, not just the first.
public struct ValidationFailure: Error, Equatable, Sendable {
    public var errors: [FieldError]

    public init(_ errors: [FieldError]) {
        self.errors = errors
    }

    public init(field: String, code: FieldError.Code, limit: Int? = nil) {
        self.errors = [FieldError(field: field, code: code, limit: limit)]
    }
}

/// Collects field errors while checking an input, then throws them together.
public struct FieldValidator: Sendable {
    public private(set) var errors: [FieldError] = []

    public init() {}

    public mutating func add(_ field: String, _ code: FieldError.Code, limit: Int? = nil, detail: String? = nil) {
        errors.append(FieldError(field: field, code: code, limit: limit, detail: detail))
    }

    /// Checks presence, length and characters of a text field; returns the trimmed text when it is usable. A
    /// `.single` line refuses every control character, `.multiple` lines allow newline and tab.
    @discardableResult
    public mutating func text(
        _ value: String?, field: String, required: Bool = true, maxLength: Int, minLength: Int = 0,
        lines: TextLines = .single
    ) -> String? {
        let trimmed = value?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
        if trimmed.isEmpty {
            if required { add(field, .required) }
            return nil
        }
        if trimmed.hasControlCharacters(allowing: lines) {
            add(field, .controlCharacter)
            return nil
        }
        if trimmed.count > maxLength {
            add(field, .tooLong, limit: maxLength)
            return nil
        }
        if trimmed.count < minLength {
            add(field, .tooShort, limit: minLength)
            return nil
        }
        return trimmed
    }

    public func check() throws(ValidationFailure) {
        if !errors.isEmpty { throw ValidationFailure(errors) }
    }
}

extension FieldValidator {
    /// Refuses a value longer than the documented limit without otherwise judging it.
    public mutating func limit(_ value: String?, field: String, maxLength: Int) {
        if let value, value.count > maxLength { add(field, .tooLong, limit: maxLength) }
    }
}

extension FieldValidator {
    /// Checks a text written in one or both languages, each as `text(_:)` does: problems in the fallback language
    /// name `field`, in another the per-language object and the language's code (`titles.de`), as an API input
    /// sends them. Required means at least one language has it; nil when something is wrong or nothing is written.
    public mutating func texts(
        _ values: [Language: String?], field: String, perLanguage: String, required: Bool = true, maxLength: Int,
        lines: TextLines = .single
    ) -> LocalizedText? {
        var accepted: [Language: String] = [:]
        var usable = true
        for language in Language.allCases {
            let name = language == .fallback ? field : "\(perLanguage).\(language.rawValue)"
            let raw = values[language] ?? nil
            let isBlank = (raw ?? "").trimmingCharacters(in: .whitespacesAndNewlines).isEmpty
            if isBlank { continue }
            if let text = text(raw, field: name, maxLength: maxLength, lines: lines) {
                accepted[language] = text
            } else {
                usable = false
            }
        }
        if accepted.isEmpty, usable, required { add(field, .required) }
        return usable && !accepted.isEmpty ? LocalizedText(accepted) : nil
    }
}
