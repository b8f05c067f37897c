import Foundation

/// A condition with nested groups, which FHIR's flat `enableWhen` cannot say, written as the FHIRPath of the SDC
/// `enableWhenExpression` extension: each clause asks the answers of `%resource` for its item.
extension InstrumentDefinition {
    func fhirPath(_ condition: Condition) -> String {
        var parts = condition.clauses.map { fhirPath($0) }
        parts += condition.groups.map { "(" + fhirPath($0) + ")" }
        return parts.joined(separator: condition.mode == .all ? " and " : " or ")
    }

    private func fhirPath(_ clause: Clause) -> String {
        let target = item(clause.item)
        let linkId = FHIRPathText.literal(target?.fhirLinkId ?? clause.item)
        let answer = "%resource.repeat(item).where(linkId = \(linkId)).answer"
        switch (clause.operator, clause.value) {
        case (.answered, .bool(false)?):
            return "\(answer).exists().not()"
        case (.answered, _):
            return "\(answer).exists()"
        case (.equals, let value?) where target?.type == .single || target?.type == .multiple:
            return "(\(answer).value.code contains \(FHIRPathText.literal(code(value))))"
        case (.notEquals, let value?) where target?.type == .single || target?.type == .multiple:
            return "(\(answer).value.code contains \(FHIRPathText.literal(code(value)))).not()"
        case (let op, let value?) where target?.type == .single || target?.type == .multiple:
            // An option's code compared in order: as a number where it is one.
            let text = code(value)
            guard let number = Double(text) else {
                return "\(answer).value.code \(symbol(op)) \(FHIRPathText.literal(text))"
            }
            return "\(answer).value.code.toDecimal() \(symbol(op)) \(number.plainText(decimals: 6))"
        case (let op, let value?):
            return "\(answer).value \(symbol(op)) \(literal(value, for: target))"
        case (_, nil):
            return "\(answer).exists()"
        }
    }

    private func symbol(_ op: Clause.Operator) -> String {
        switch op {
        case .equals, .answered: "="
        case .notEquals: "!="
        case .greater: ">"
        case .less: "<"
        case .atLeast: ">="
        case .atMost: "<="
        }
    }

    private func code(_ value: AnswerValue) -> String {
        switch value {
        case .text(let text): text
        case .number(let number): number.plainText()
        case .bool(let flag): flag ? "1" : "0"
        case .list(let codes): codes.first ?? ""
        }
    }

    private func literal(_ value: AnswerValue, for target: Item?) -> String {
        switch value {
        case .bool(let flag): return flag ? "true" : "false"
        case .number(let number): return number.plainText(decimals: 6)
        case .list(let codes): return FHIRPathText.literal(codes.first ?? "")
        case .text(let text):
            switch target?.type {
            case .date, .dateTime: return "@" + text
            case .time: return "@T" + InstrumentDefinition.fhirTime(text)
            default: return FHIRPathText.literal(text)
            }
        }
    }
}

enum FHIRPathText {
    /// A FHIRPath string literal: single quotes, with backslash and quote escaped.
    static func literal(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'") + "'"
    }
}
