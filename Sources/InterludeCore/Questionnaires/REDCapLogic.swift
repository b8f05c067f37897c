import Foundation

/// REDCap branching logic and calculations, read exactly or refused: comparisons of a field with a value
/// (`= != <> < <= > >=`), joined by `and` and `or` (`and` binding closer) and grouped by parentheses, checkbox
/// options as `[field(code)]`. Read by one pass over the characters into tokens and a parser that stops at a fixed
/// depth, never by a regular expression: the text comes from whoever uploads the dictionary.
enum REDCapLogic {
    enum Failure: Error, Equatable {
        /// Anything beyond the comparisons above: functions, field-to-field comparisons, smart variables.
        case unsupported
        /// `[event][field]` or `[event-name]`: logic across the events of a longitudinal project.
        case longitudinal
    }

    /// The longest branching logic read; longer ones are refused before any reading.
    static let maxLength = 2000

    static func condition(_ logic: String, fieldTypes: [String: String]) throws(Failure) -> Condition {
        var parser = Parser(tokens: try tokens(logic), fieldTypes: fieldTypes)
        let node = try parser.expression(depth: 0)
        guard parser.atEnd else { throw .unsupported }
        switch node {
        case .clause(let clause): return Condition(.all, [clause])
        case .group(let condition): return condition
        }
    }

    /// `sum([a],[b],[c])`, `mean([a],[b])` or `[a] + [b] + [c]`: the method and the fields, else nil.
    static func aggregate(_ formula: String) -> (ScoreRule.Method, [String])? {
        guard formula.count <= maxLength, let tokens = try? tokens(formula), !tokens.isEmpty else { return nil }
        var fields: [String] = []
        if case .word(let name) = tokens[0], ["sum", "mean"].contains(name.lowercased()),
            tokens.count >= 3, tokens[1] == .open, tokens.last == .close
        {
            for (index, token) in tokens.dropFirst(2).dropLast().enumerated() {
                switch (index.isMultiple(of: 2), token) {
                case (true, .field(let name, nil)): fields.append(name)
                case (false, .comma): continue
                default: return nil
                }
            }
            guard !fields.isEmpty, tokens.count == 2 + fields.count * 2 else { return nil }
            return (name.lowercased() == "sum" ? .sum : .mean, fields)
        }
        for (index, token) in tokens.enumerated() {
            switch (index.isMultiple(of: 2), token) {
            case (true, .field(let name, nil)): fields.append(name)
            case (false, .plus): continue
            default: return nil
            }
        }
        guard fields.count >= 2, tokens.count == fields.count * 2 - 1 else { return nil }
        return (.sum, fields)
    }

    enum Token: Equatable {
        case field(String, code: String?)
        case text(String)
        case number(Double)
        case comparison(String)
        case word(String)
        case open, close, comma, plus
    }

    /// The tokens of `text`: each character is looked at once.
    static func tokens(_ text: String) throws(Failure) -> [Token] {
        let characters = Array(text)
        var tokens: [Token] = []
        var index = 0
        while index < characters.count {
            let character = characters[index]
            switch character {
            case let space where space.isWhitespace:
                index += 1
            case "[":
                guard let close = characters[index...].firstIndex(of: "]") else { throw .unsupported }
                let inside = String(characters[(index + 1)..<close])
                index = close + 1
                // `[event][field]`: a field of another event.
                if index < characters.count, characters[index] == "[" { throw .longitudinal }
                tokens.append(try field(inside))
            case "'", "\"":
                guard let close = characters[(index + 1)...].firstIndex(of: character) else { throw .unsupported }
                tokens.append(.text(String(characters[(index + 1)..<close])))
                index = close + 1
            case "(":
                tokens.append(.open)
                index += 1
            case ")":
                tokens.append(.close)
                index += 1
            case ",":
                tokens.append(.comma)
                index += 1
            case "+":
                tokens.append(.plus)
                index += 1
            case "=", "!", "<", ">":
                let pair = index + 1 < characters.count ? String(characters[index...(index + 1)]) : ""
                if ["!=", "<>", "<=", ">="].contains(pair) {
                    tokens.append(.comparison(pair))
                    index += 2
                } else if character != "!" {
                    tokens.append(.comparison(String(character)))
                    index += 1
                } else {
                    throw .unsupported
                }
            case let digit where digit.isASCII && (digit.isNumber || digit == "." || digit == "-"):
                var end = index + 1
                while end < characters.count, characters[end].isASCII,
                    characters[end].isNumber || characters[end] == "."
                {
                    end += 1
                }
                guard let number = Double(String(characters[index..<end])) else { throw .unsupported }
                tokens.append(.number(number))
                index = end
            case let letter where letter.isASCII && letter.isLetter:
                var end = index + 1
                while end < characters.count, characters[end].isASCII,
                    characters[end].isLetter || characters[end].isNumber || characters[end] == "_"
                {
                    end += 1
                }
                tokens.append(.word(String(characters[index..<end])))
                index = end
            default:
                throw .unsupported
            }
        }
        return tokens
    }

    /// `name` or `name(code)`; the smart variables of events (`event-name`, `previous-event-name`, …) are
    /// longitudinal, other names with more than letters, digits and `_` are not fields.
    private static func field(_ inside: String) throws(Failure) -> Token {
        if inside.lowercased().contains("event-name") || inside.lowercased().hasPrefix("event-") {
            throw .longitudinal
        }
        var name = Substring(inside)
        var code: String?
        if let open = inside.firstIndex(of: "(") {
            guard inside.last == ")" else { throw .unsupported }
            name = inside[..<open]
            let inner = inside[inside.index(after: open)..<inside.index(before: inside.endIndex)]
            guard !inner.isEmpty, !inner.contains(")"), !inner.contains("(") else { throw .unsupported }
            code = String(inner)
        }
        guard !name.isEmpty, name.unicodeScalars.allSatisfy(isNameScalar) else { throw .unsupported }
        return .field(String(name), code: code)
    }

    private static func isNameScalar(_ scalar: Unicode.Scalar) -> Bool {
        ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar) || scalar == "_"
    }

    enum Node {
        case clause(Clause)
        case group(Condition)
    }

    struct Parser {
        let tokens: [Token]
        let fieldTypes: [String: String]
        var position = 0

        init(tokens: [Token], fieldTypes: [String: String]) {
            self.tokens = tokens
            self.fieldTypes = fieldTypes
        }

        var atEnd: Bool { position == tokens.count }

        private func isWord(_ word: String) -> Bool {
            if position < tokens.count, case .word(let found) = tokens[position] { return found.lowercased() == word }
            return false
        }

        /// `a or b or …`, each an `and` chain.
        mutating func expression(depth: Int) throws(Failure) -> Node {
            var parts = [try conjunction(depth: depth)]
            while isWord("or") {
                position += 1
                parts.append(try conjunction(depth: depth))
            }
            return Self.combine(parts, .any)
        }

        private mutating func conjunction(depth: Int) throws(Failure) -> Node {
            var parts = [try primary(depth: depth)]
            while isWord("and") {
                position += 1
                parts.append(try primary(depth: depth))
            }
            return Self.combine(parts, .all)
        }

        private mutating func primary(depth: Int) throws(Failure) -> Node {
            guard position < tokens.count else { throw .unsupported }
            if tokens[position] == .open {
                guard depth < Condition.maxDepth else { throw .unsupported }
                position += 1
                let inner = try expression(depth: depth + 1)
                guard position < tokens.count, tokens[position] == .close else { throw .unsupported }
                position += 1
                return inner
            }
            return try comparison()
        }

        /// `[field] op value`.
        private mutating func comparison() throws(Failure) -> Node {
            guard position + 3 <= tokens.count, case .field(let name, let code) = tokens[position],
                case .comparison(let symbol) = tokens[position + 1]
            else { throw .unsupported }
            let value: String
            switch tokens[position + 2] {
            case .text(let text): value = text
            case .number(let number): value = number.plainText(decimals: 6)
            default: throw .unsupported
            }
            position += 3
            if let code { return try Self.checkbox(name, code: code, symbol, value) }
            if value.isEmpty {
                switch symbol {
                case "=": return .clause(Clause(item: name, .answered, .bool(false)))
                case "!=", "<>": return .clause(Clause(item: name, .answered, .bool(true)))
                default: throw .unsupported
                }
            }
            let answer: AnswerValue
            switch fieldTypes[name] {
            case "yesno", "truefalse":
                guard ["=", "!=", "<>"].contains(symbol), value == "0" || value == "1" else { throw .unsupported }
                answer = .bool(value == "1")
            case "radio", "dropdown":
                answer = .text(value)
            case "checkbox":
                throw .unsupported
            default:
                answer = Double(value).map(AnswerValue.number) ?? .text(value)
            }
            let operators: [String: Clause.Operator] = [
                "=": .equals, "!=": .notEquals, "<>": .notEquals, ">": .greater, "<": .less, ">=": .atLeast,
                "<=": .atMost,
            ]
            guard let op = operators[symbol] else { throw .unsupported }
            return .clause(Clause(item: name, op, answer))
        }

        /// `[field(code)] = '1'` (ticked) or `= '0'` (not ticked, also when nothing is answered).
        private static func checkbox(_ name: String, code: String, _ symbol: String, _ value: String) throws(Failure)
            -> Node
        {
            guard ["=", "!=", "<>"].contains(symbol), value == "1" || value == "0" else { throw .unsupported }
            let ticked = (symbol == "=") == (value == "1")
            if ticked { return .clause(Clause(item: name, .equals, .text(code))) }
            return .group(
                Condition(
                    .any, [Clause(item: name, .answered, .bool(false)), Clause(item: name, .notEquals, .text(code))]))
        }

        /// Several parts under one mode; a part that is a group of the same mode joins it.
        private static func combine(_ parts: [Node], _ mode: Condition.Mode) -> Node {
            guard parts.count > 1 else { return parts[0] }
            var clauses: [Clause] = []
            var groups: [Condition] = []
            for part in parts {
                switch part {
                case .clause(let clause): clauses.append(clause)
                case .group(let group) where group.mode == mode:
                    clauses += group.clauses
                    groups += group.groups
                case .group(let group): groups.append(group)
                }
            }
            return .group(Condition(mode, clauses, groups: groups))
        }
    }
}
