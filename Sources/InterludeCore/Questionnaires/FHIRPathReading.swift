import Foundation

/// The FHIRPath that real questionnaires use for visibility and simple scores, read into what Interlude runs:
/// comparisons of answers with values (`= != < <= > >=`), `exists()`, `empty()`, `not()`, `and`/`or` with
/// parentheses, on `%resource.item.where(linkId = 'x').answer.value` (also `repeat(item)`, nested `item`, `.code`,
/// `.ordinal()`, `.weight()`) and on variables naming such answers; and the sum or mean of answers' ordinal
/// values. Anything else is refused by the caller, naming the expression. Read by a tokenizer that looks at each
/// character once and a parser that stops at a fixed depth.
enum FHIRPathReading {
    struct Unsupported: Error {}

    /// The longest expression read.
    static let maxLength = 4000

    indirect enum Node: Equatable {
        case text(String)
        case number(Double)
        case flag(Bool)
        /// `%name` or an identifier at the start of a path.
        case name(String)
        /// `target.member`
        case member(Node, String)
        /// `target.function(arguments)`, or a function without a target.
        case call(Node?, String, [Node])
        case binary(String, Node, Node)
    }

    /// An answer's value, as a path names it: the item's linkId and whether the path took the coding's code or its
    /// ordinal value.
    struct AnswerReference: Equatable {
        enum Part: Equatable {
            case value
            case code
            case ordinal
        }

        var linkId: String
        var part: Part
        /// `.answer` without `.value`: whether there is an answer at all.
        var answerOnly: Bool
    }

    // MARK: Reading text

    static func parse(_ text: String) throws(Unsupported) -> Node {
        guard text.count <= maxLength else { throw Unsupported() }
        var parser = Parser(tokens: try tokens(text))
        let node = try parser.expression(0)
        guard parser.atEnd else { throw Unsupported() }
        return node
    }

    enum Token: Equatable {
        case text(String)
        case number(Double)
        case identifier(String)
        case variable(String)
        case symbol(String)
    }

    static func tokens(_ text: String) throws(Unsupported) -> [Token] {
        let characters = Array(text)
        var tokens: [Token] = []
        var index = 0
        func isNamePart(_ character: Character) -> Bool {
            character.isASCII && (character.isLetter || character.isNumber || character == "_")
        }
        while index < characters.count {
            let character = characters[index]
            if character.isWhitespace {
                index += 1
            } else if character == "'" {
                var value = ""
                index += 1
                while index < characters.count, characters[index] != "'" {
                    if characters[index] == "\\", index + 1 < characters.count {
                        index += 1
                    }
                    value.append(characters[index])
                    index += 1
                }
                guard index < characters.count else { throw Unsupported() }
                tokens.append(.text(value))
                index += 1
            } else if character == "@" {
                // A date, date-time or time literal (`@2026-01-31`, `@T09:30`), kept as the text Interlude stores.
                var end = index + 1
                while end < characters.count, characters[end].isASCII,
                    characters[end].isNumber || "-:T.+Z".contains(characters[end])
                {
                    end += 1
                }
                var value = String(characters[(index + 1)..<end])
                if value.hasPrefix("T") { value.removeFirst() }
                guard !value.isEmpty else { throw Unsupported() }
                tokens.append(.text(value))
                index = end
            } else if character == "`" {
                guard let close = characters[(index + 1)...].firstIndex(of: "`") else { throw Unsupported() }
                tokens.append(.identifier(String(characters[(index + 1)..<close])))
                index = close + 1
            } else if character.isASCII, character.isNumber {
                var end = index + 1
                while end < characters.count, characters[end].isASCII,
                    characters[end].isNumber
                        || (characters[end] == "." && end + 1 < characters.count
                            && characters[end + 1].isNumber)
                {
                    end += 1
                }
                guard let number = Double(String(characters[index..<end])) else { throw Unsupported() }
                tokens.append(.number(number))
                index = end
            } else if character == "%" {
                var end = index + 1
                if end < characters.count, characters[end] == "'" || characters[end] == "`" {
                    let quote = characters[end]
                    guard let close = characters[(end + 1)...].firstIndex(of: quote) else { throw Unsupported() }
                    tokens.append(.variable(String(characters[(end + 1)..<close])))
                    index = close + 1
                    continue
                }
                while end < characters.count, isNamePart(characters[end]) { end += 1 }
                guard end > index + 1 else { throw Unsupported() }
                tokens.append(.variable(String(characters[(index + 1)..<end])))
                index = end
            } else if isNamePart(character) {
                var end = index + 1
                while end < characters.count, isNamePart(characters[end]) { end += 1 }
                tokens.append(.identifier(String(characters[index..<end])))
                index = end
            } else {
                let pair = index + 1 < characters.count ? String(characters[index...(index + 1)]) : ""
                if ["!=", "<=", ">="].contains(pair) {
                    tokens.append(.symbol(pair))
                    index += 2
                } else if "=<>+-*/|().,".contains(character) {
                    tokens.append(.symbol(String(character)))
                    index += 1
                } else {
                    throw Unsupported()
                }
            }
        }
        return tokens
    }

    struct Parser {
        let tokens: [Token]
        var position = 0

        init(tokens: [Token]) {
            self.tokens = tokens
        }

        var atEnd: Bool { position == tokens.count }

        private var next: Token? { position < tokens.count ? tokens[position] : nil }

        private mutating func take(_ symbol: String) -> Bool {
            if next == .symbol(symbol) {
                position += 1
                return true
            }
            return false
        }

        private mutating func takeWord(_ word: String) -> Bool {
            if next == .identifier(word) {
                position += 1
                return true
            }
            return false
        }

        /// Operators from the loosest: or, and, membership, comparison, sums, products, union.
        mutating func expression(_ depth: Int) throws(Unsupported) -> Node {
            guard depth < 2 * Condition.maxDepth else { throw Unsupported() }
            var left = try conjunction(depth)
            while takeWord("or") { left = .binary("or", left, try conjunction(depth)) }
            return left
        }

        private mutating func conjunction(_ depth: Int) throws(Unsupported) -> Node {
            var left = try membership(depth)
            while takeWord("and") { left = .binary("and", left, try membership(depth)) }
            return left
        }

        private mutating func membership(_ depth: Int) throws(Unsupported) -> Node {
            var left = try comparison(depth)
            while true {
                if takeWord("in") {
                    left = .binary("in", left, try comparison(depth))
                } else if takeWord("contains") {
                    left = .binary("contains", left, try comparison(depth))
                } else {
                    return left
                }
            }
        }

        private mutating func comparison(_ depth: Int) throws(Unsupported) -> Node {
            let left = try additive(depth)
            for symbol in ["=", "!=", "<", "<=", ">", ">="] where take(symbol) {
                return .binary(symbol, left, try additive(depth))
            }
            return left
        }

        private mutating func additive(_ depth: Int) throws(Unsupported) -> Node {
            var left = try multiplicative(depth)
            while true {
                if take("+") {
                    left = .binary("+", left, try multiplicative(depth))
                } else if take("-") {
                    left = .binary("-", left, try multiplicative(depth))
                } else {
                    return left
                }
            }
        }

        private mutating func multiplicative(_ depth: Int) throws(Unsupported) -> Node {
            var left = try union(depth)
            while true {
                if take("*") {
                    left = .binary("*", left, try union(depth))
                } else if take("/") {
                    left = .binary("/", left, try union(depth))
                } else {
                    return left
                }
            }
        }

        private mutating func union(_ depth: Int) throws(Unsupported) -> Node {
            var left = try postfix(depth)
            while take("|") { left = .binary("|", left, try postfix(depth)) }
            return left
        }

        /// A term followed by `.member` and `.function(…)`.
        private mutating func postfix(_ depth: Int) throws(Unsupported) -> Node {
            var node = try term(depth)
            while take(".") {
                guard case .identifier(let name)? = next else { throw Unsupported() }
                position += 1
                if take("(") {
                    node = .call(node, name, try arguments(depth))
                } else {
                    node = .member(node, name)
                }
            }
            return node
        }

        private mutating func arguments(_ depth: Int) throws(Unsupported) -> [Node] {
            var result: [Node] = []
            if take(")") { return result }
            repeat { result.append(try expression(depth + 1)) } while take(",")
            guard take(")") else { throw Unsupported() }
            return result
        }

        private mutating func term(_ depth: Int) throws(Unsupported) -> Node {
            guard let token = next else { throw Unsupported() }
            position += 1
            switch token {
            case .text(let value): return .text(value)
            case .number(let value): return .number(value)
            case .variable(let name): return .name("%" + name)
            case .identifier("true"): return .flag(true)
            case .identifier("false"): return .flag(false)
            case .identifier(let name):
                if take("(") { return .call(nil, name, try arguments(depth)) }
                return .name(name)
            case .symbol("("):
                let inner = try expression(depth + 1)
                guard take(")") else { throw Unsupported() }
                return inner
            case .symbol("-"):
                guard case .number(let value)? = next else { throw Unsupported() }
                position += 1
                return .number(-value)
            default:
                throw Unsupported()
            }
        }
    }

    // MARK: Understanding

    /// What a questionnaire's variables stand for, by name (`%score_a`), read from their expressions.
    typealias Variables = [String: Node]

    /// The answer a path names: `%resource.item.where(linkId = 'x').answer.value`, with `repeat(item)` or nested
    /// `item`s in place of the first `item`, and `.code` or `.ordinal()`/`.weight()` after the value; or a variable
    /// that names one.
    static func answer(_ node: Node, variables: Variables, depth: Int = 0) -> AnswerReference? {
        guard depth < 8 else { return nil }
        switch node {
        case .name(let name):
            return variables[name].flatMap { answer($0, variables: variables, depth: depth + 1) }
        case .call(let target?, let function, []) where function == "ordinal" || function == "weight":
            guard var reference = answer(target, variables: variables, depth: depth + 1), !reference.answerOnly,
                reference.part == .value
            else { return nil }
            reference.part = .ordinal
            return reference
        case .call(let target?, let function, []) where function == "toDecimal" || function == "toInteger":
            guard let reference = answer(target, variables: variables, depth: depth + 1), !reference.answerOnly else {
                return nil
            }
            return reference
        case .member(let target, "code"):
            guard var reference = answer(target, variables: variables, depth: depth + 1), !reference.answerOnly,
                reference.part == .value
            else { return nil }
            reference.part = .code
            return reference
        case .member(let target, "value"):
            guard var reference = answer(target, variables: variables, depth: depth + 1), reference.answerOnly else {
                return nil
            }
            reference.answerOnly = false
            return reference
        case .member(let target, "answer"):
            guard let linkId = item(target, variables: variables, depth: depth + 1) else { return nil }
            return AnswerReference(linkId: linkId, part: .value, answerOnly: true)
        default:
            return nil
        }
    }

    /// The linkId of `….where(linkId = 'x')` on the questionnaire's items.
    private static func item(_ node: Node, variables: Variables, depth: Int) -> String? {
        guard case .call(let target?, "where", let arguments) = node, arguments.count == 1,
            isItems(target, variables: variables, depth: depth + 1)
        else { return nil }
        switch arguments[0] {
        case .binary("=", .name("linkId"), .text(let linkId)), .binary("=", .text(let linkId), .name("linkId")):
            return linkId
        default:
            return nil
        }
    }

    /// `%resource.item`, `%resource.repeat(item)`, or items nested under a chosen item (`….where(…).item`).
    private static func isItems(_ node: Node, variables: Variables, depth: Int) -> Bool {
        guard depth < 8 else { return false }
        let roots = ["%resource", "%questionnaireResponse", "%context"]
        switch node {
        case .member(.name(let root), "item"), .call(.name(let root)?, "repeat", [.name("item")]):
            return roots.contains(root)
        case .member(let target, "item"), .call(let target?, "repeat", [.name("item")]):
            return item(target, variables: variables, depth: depth + 1) != nil
                || isItems(target, variables: variables, depth: depth + 1)
        case .name(let name):
            return variables[name].map { isItems($0, variables: variables, depth: depth + 1) } ?? false
        default:
            return false
        }
    }

    /// Marks a clause on an answer's ordinal value (`….answer.value.ordinal() >= 2`): its item is this prefix and
    /// the linkId, to be turned into the options whose values compare so.
    static let ordinalMarker = "ordinal():"

    /// The clause on an item's ordinal value as the options it stands for: any of those whose value compares so
    /// (none: a condition that never holds).
    static func options(for clause: Clause, id: String, options: [AnswerOption]) -> Condition? {
        guard case .number(let number)? = clause.value else { return nil }
        let chosen = options.filter { option in
            guard let value = option.score else { return false }
            return InstrumentLogic.holds(Clause(item: id, clause.operator, .number(number)), answer: .number(value))
        }
        guard !chosen.isEmpty else {
            return Condition(
                .all, [Clause(item: id, .answered, .bool(true)), Clause(item: id, .answered, .bool(false))])
        }
        return Condition(.any, chosen.map { Clause(item: id, .equals, .text($0.code)) })
    }

    /// A visibility condition, with linkIds as the file has them.
    static func condition(_ node: Node, variables: Variables, depth: Int = 0) throws(Unsupported) -> Condition {
        guard depth < Condition.maxDepth else { throw Unsupported() }
        switch node {
        case .binary(let word, let left, let right) where word == "and" || word == "or":
            let mode: Condition.Mode = word == "and" ? .all : .any
            var clauses: [Clause] = []
            var groups: [Condition] = []
            for side in [left, right] {
                let part = try condition(side, variables: variables, depth: depth + 1)
                if part.mode == mode || part.clauses.count + part.groups.count == 1 {
                    clauses += part.clauses
                    groups += part.groups
                } else {
                    groups.append(part)
                }
            }
            return Condition(mode, clauses, groups: groups)
        default:
            return Condition(.all, [try clause(node, variables: variables)])
        }
    }

    private static func clause(_ node: Node, variables: Variables) throws(Unsupported) -> Clause {
        switch node {
        case .call(let target?, "exists", []):
            guard let reference = answer(target, variables: variables) else { throw Unsupported() }
            return Clause(item: reference.linkId, .answered, .bool(true))
        case .call(let target?, "empty", []):
            guard let reference = answer(target, variables: variables) else { throw Unsupported() }
            return Clause(item: reference.linkId, .answered, .bool(false))
        case .call(let target?, "not", []):
            var inner = try clause(target, variables: variables)
            switch inner.operator {
            case .answered:
                inner.value = .bool(inner.value != .bool(true))
            case .equals:
                inner.operator = .notEquals
            case .notEquals:
                inner.operator = .equals
            default:
                throw Unsupported()
            }
            return inner
        case .binary("contains", let collection, let value), .binary("in", let value, let collection):
            guard let reference = answer(collection, variables: variables), let literal = literal(value) else {
                throw Unsupported()
            }
            return Clause(item: reference.linkId, .equals, literal)
        case .binary(let symbol, let left, let right):
            let operators: [String: Clause.Operator] = [
                "=": .equals, "!=": .notEquals, ">": .greater, "<": .less, ">=": .atLeast, "<=": .atMost,
            ]
            guard var op = operators[symbol] else { throw Unsupported() }
            var reference = answer(left, variables: variables)
            var value = literal(right)
            if reference == nil, let flipped = answer(right, variables: variables) {
                reference = flipped
                value = literal(left)
                let mirrored: [Clause.Operator: Clause.Operator] = [
                    .greater: .less, .less: .greater, .atLeast: .atMost, .atMost: .atLeast,
                ]
                op = mirrored[op] ?? op
            }
            guard let reference, let value, !reference.answerOnly else { throw Unsupported() }
            // An ordinal value compared stands for the options that have such values; the caller knows them.
            let item = reference.part == .ordinal ? ordinalMarker + reference.linkId : reference.linkId
            return Clause(item: item, op, value)
        default:
            throw Unsupported()
        }
    }

    private static func literal(_ node: Node) -> AnswerValue? {
        switch node {
        case .text(let text):
            // FHIRPath dates and times are written `@2026-01-31`, which the tokenizer does not read; quoted they
            // compare as text, as Interlude stores them.
            return .text(text)
        case .number(let number): return .number(number)
        case .flag(let flag): return .bool(flag)
        default: return nil
        }
    }

    /// A score Interlude computes: the sum of several answers' values (`a + b + c`, `(a | b).sum()`), their mean
    /// (`avg()`, or the sum divided by how many there are). The method and the linkIds in order, or nil.
    static func aggregate(_ node: Node, variables: Variables) -> (ScoreRule.Method, [String])? {
        if case .binary("/", let sum, .number(let count)) = node, let terms = summands(sum, variables: variables),
            Double(terms.count) == count
        {
            return (.mean, terms)
        }
        if case .call(let target?, let function, []) = node, function == "sum" || function == "avg",
            let terms = union(target, variables: variables)
        {
            return (function == "sum" ? .sum : .mean, terms)
        }
        guard let terms = summands(node, variables: variables), terms.count > 1 else { return nil }
        return (.sum, terms)
    }

    private static func summands(_ node: Node, variables: Variables, depth: Int = 0) -> [String]? {
        guard depth < 64 else { return nil }
        switch node {
        case .binary("+", let left, let right):
            guard let first = summands(left, variables: variables, depth: depth + 1),
                let second = summands(right, variables: variables, depth: depth + 1)
            else { return nil }
            return first + second
        case .call(let target?, "sum", []):
            return union(target, variables: variables)
        case .name(let name):
            if let bound = variables[name], let terms = summands(bound, variables: variables, depth: depth + 1) {
                return terms
            }
            return answer(node, variables: variables).flatMap { $0.answerOnly ? nil : [$0.linkId] }
        default:
            return answer(node, variables: variables).flatMap { $0.answerOnly ? nil : [$0.linkId] }
        }
    }

    /// Stands for every answer of the questionnaire in `aggregate`'s linkIds: `%resource.repeat(item).answer.value
    /// .ordinal().sum()`.
    static let everyAnswer = "*"

    private static func union(_ node: Node, variables: Variables, depth: Int = 0) -> [String]? {
        guard depth < 64 else { return nil }
        if case .call(let values?, let function, []) = node, function == "ordinal" || function == "weight",
            case .member(.member(let items, "answer"), "value") = values,
            isItems(items, variables: variables, depth: 0),
            item(items, variables: variables, depth: 0) == nil
        {
            return [everyAnswer]
        }
        if case .binary("|", let left, let right) = node {
            guard let first = union(left, variables: variables, depth: depth + 1),
                let second = union(right, variables: variables, depth: depth + 1)
            else { return nil }
            return first + second
        }
        return answer(node, variables: variables).flatMap { $0.answerOnly ? nil : [$0.linkId] }
    }
}
