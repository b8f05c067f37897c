import Foundation

/// Which sections and items a person sees given their answers so far, how far they are, and what is missing.
/// The patient app runs the same rules (Public/js/lib/instrument-logic.js) against the same test vectors.
public struct InstrumentLogic: Sendable {
    public let definition: InstrumentDefinition

    public init(_ definition: InstrumentDefinition) {
        self.definition = definition
    }

    /// The visible sections and items for `answers`. An answer to a hidden item does not count in conditions.
    public func visibility(_ answers: Answers) -> Visibility {
        var evaluator = Evaluator(definition: definition, answers: answers)
        var sections: Set<String> = []
        var items: Set<String> = []
        for section in definition.sections where evaluator.sectionVisible(section) {
            sections.insert(section.id)
            // An item without a condition of its own is seen wherever its section is.
            for item in section.items where item.visibleWhen == nil || evaluator.itemVisible(item.id) {
                items.insert(item.id)
            }
        }
        return Visibility(sections: sections, items: items)
    }

    /// Answered and total visible questions (display texts do not count).
    public func progress(_ answers: Answers) -> (answered: Int, total: Int) {
        let visible = visibility(answers)
        let questions = definition.items.filter { $0.type.takesAnswer && visible.items.contains($0.id) }
        let answered = questions.filter { Self.isAnswered(answers[$0.id]) }
        return (answered.count, questions.count)
    }

    /// Required visible questions without an answer, in the order a person meets them.
    public func missingRequired(_ answers: Answers) -> [String] {
        missingRequired(answers, visible: visibility(answers))
    }

    /// Required questions among `visible` without an answer.
    public func missingRequired(_ answers: Answers, visible: Visibility) -> [String] {
        var missing: [String] = []
        for section in definition.sections {
            for item in section.items
            where item.type.takesAnswer && item.required && visible.items.contains(item.id)
                && !Self.isAnswered(answers[item.id])
            {
                missing.append(item.id)
            }
        }
        return missing
    }

    /// An empty text or an empty selection is no answer.
    public static func isAnswered(_ value: AnswerValue?) -> Bool {
        switch value {
        case nil: return false
        case .text(let text): return !text.isEmpty
        case .list(let list): return !list.isEmpty
        default: return true
        }
    }

    /// Whether `clause` holds for the (effective) answer of its item.
    static func holds(_ clause: Clause, answer: AnswerValue?) -> Bool {
        let answered = isAnswered(answer)
        if clause.operator == .answered {
            let expected: Bool
            if case .bool(let value) = clause.value { expected = value } else { expected = true }
            return answered == expected
        }
        guard answered, let answer, let value = clause.value else { return false }
        switch clause.operator {
        case .equals: return matches(answer, value)
        case .notEquals: return !matches(answer, value)
        case .greater: return compare(answer, value).map { $0 > 0 } ?? false
        case .less: return compare(answer, value).map { $0 < 0 } ?? false
        case .atLeast: return compare(answer, value).map { $0 >= 0 } ?? false
        case .atMost: return compare(answer, value).map { $0 <= 0 } ?? false
        case .answered: return false
        }
    }

    /// Equality with the looseness imports need: option code "1" equals the number 1; a selection "equals" a
    /// code it contains.
    static func matches(_ answer: AnswerValue, _ value: AnswerValue) -> Bool {
        switch (answer, value) {
        case (.list(let codes), .text(let code)): return codes.contains(code)
        case (.list(let codes), .number(let number)): return codes.contains { Double($0) == number }
        case (.bool(let left), .bool(let right)): return left == right
        case (.text(let left), .text(let right)): return left == right
        default:
            if let left = numeric(answer), let right = numeric(value) { return abs(left - right) < 1e-9 }
            return false
        }
    }

    /// -1, 0 or 1 for numbers (also option codes that are numbers) and for texts such as ISO dates; nil otherwise.
    static func compare(_ answer: AnswerValue, _ value: AnswerValue) -> Int? {
        if let left = numeric(answer), let right = numeric(value) {
            return left < right ? -1 : (left > right ? 1 : 0)
        }
        if case .text(let left) = answer, case .text(let right) = value {
            return left < right ? -1 : (left > right ? 1 : 0)
        }
        return nil
    }

    static func numeric(_ value: AnswerValue) -> Double? {
        switch value {
        case .number(let number): return number
        case .text(let text): return Double(text)
        default: return nil
        }
    }

    /// Evaluates visibility once per item and section, following references between them. Items may depend on
    /// each other in a circle ("answer, or tick *don't know*": each shown while the other is empty): where a
    /// reference leads back to an item being decided, that item's answer counts as given, as REDCap reads it.
    struct Evaluator {
        let definition: InstrumentDefinition
        let answers: Answers
        private var items: [String: Bool] = [:]
        private var sections: [String: Bool] = [:]
        private var visiting: Set<String> = []

        init(definition: InstrumentDefinition, answers: Answers) {
            self.definition = definition
            self.answers = answers
        }

        mutating func sectionVisible(_ section: Section) -> Bool {
            if let known = sections[section.id] { return known }
            let marker = "section:" + section.id
            guard !visiting.contains(marker) else { return false }
            visiting.insert(marker)
            let visible = section.visibleWhen.map { holds($0) } ?? true
            visiting.remove(marker)
            sections[section.id] = visible
            return visible
        }

        mutating func itemVisible(_ id: String) -> Bool {
            if let known = items[id] { return known }
            guard let item = definition.item(id), let section = definition.section(containing: id) else { return false }
            let marker = "item:" + id
            guard !visiting.contains(marker) else { return false }
            visiting.insert(marker)
            let visible = sectionVisible(section) && (item.visibleWhen.map { holds($0) } ?? true)
            visiting.remove(marker)
            items[id] = visible
            return visible
        }

        private mutating func holds(_ condition: Condition) -> Bool {
            var results: [Bool] = []
            for clause in condition.clauses {
                let answer =
                    visiting.contains("item:" + clause.item) || itemVisible(clause.item) ? answers[clause.item] : nil
                results.append(InstrumentLogic.holds(clause, answer: answer))
            }
            for group in condition.groups { results.append(holds(group)) }
            switch condition.mode {
            case .all: return results.allSatisfy { $0 }
            case .any: return results.contains(true)
            }
        }
    }
}

/// The sections and items shown for one set of answers.
public struct Visibility: Equatable, Sendable {
    public var sections: Set<String>
    public var items: Set<String>
}
