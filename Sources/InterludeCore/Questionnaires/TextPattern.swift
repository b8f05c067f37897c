import Foundation

/// Regular expressions a text answer must match whole, as FHIR's `regex` extension gives them. A pattern comes from
/// whoever imports the questionnaire and runs over what patients type, so it is matched by a small engine that
/// never backtracks: the pattern becomes a set of states, and the answer is read once while every state it could
/// be in is followed together, in time proportional to the pattern's size times the answer's length. It reads what
/// questionnaires use: literals, `.`, classes (`[a-z]`, `[^0-9]`, `\d \w \s` and their negations), groups with `|`,
/// the quantifiers `* + ? {n} {n,} {n,m}`, and `^`/`$` at the ends; back-references, lookaround and word boundaries
/// are refused.
public enum TextPattern {
    public static let maxLength = 200
    /// The most states a pattern may make: a counted repetition copies what it repeats.
    static let maxStates = 2000

    /// Why the pattern cannot be used, or nil.
    public static func problem(_ pattern: String) -> FieldError.Code? {
        guard pattern.count <= maxLength else { return .tooLong }
        do {
            _ = try Program(pattern)
            return nil
        } catch {
            return error.code
        }
    }

    /// Whether `text` matches the whole pattern.
    public static func matches(_ pattern: String, _ text: String) -> Bool {
        guard pattern.count <= maxLength, let program = try? Program(pattern) else { return false }
        return program.matches(text)
    }

    struct Failure: Error {
        let code: FieldError.Code

        static let invalid = Failure(code: .invalidFormat)
        static let unsupported = Failure(code: .tooComplex)
    }

    /// What one character of the answer must be.
    enum Atom {
        case any
        case scalar(Unicode.Scalar)
        case set(ranges: [ClosedRange<UInt32>], negated: Bool)

        func matches(_ scalar: Unicode.Scalar) -> Bool {
            switch self {
            case .any: return scalar != "\n"
            case .scalar(let expected): return scalar == expected
            case .set(let ranges, let negated): return ranges.contains { $0.contains(scalar.value) } != negated
            }
        }

        static let digit: [ClosedRange<UInt32>] = [48...57]
        static let word: [ClosedRange<UInt32>] = [48...57, 65...90, 95...95, 97...122]
        static let space: [ClosedRange<UInt32>] = [9...13, 32...32]
    }

    indirect enum Node {
        case empty
        case atom(Atom)
        case sequence([Node])
        case choice([Node])
        case repetition(Node, min: Int, max: Int?)
    }

    /// The states of a pattern and the walk over an answer.
    struct Program {
        enum State {
            case atom(Atom, next: Int)
            case split(Int, Int)
            case accept
        }

        private(set) var states: [State] = [.accept]
        private(set) var start = 0

        init(_ pattern: String) throws(Failure) {
            var parser = Parser(Array(pattern.unicodeScalars))
            let node = try parser.pattern()
            start = try compile(node, next: 0)
        }

        private mutating func add(_ state: State) throws(Failure) -> Int {
            guard states.count < TextPattern.maxStates else { throw .unsupported }
            states.append(state)
            return states.count - 1
        }

        /// The states for `node`, built from its end: the index where it starts, leading on to `next`.
        private mutating func compile(_ node: Node, next: Int) throws(Failure) -> Int {
            switch node {
            case .empty:
                return next
            case .atom(let atom):
                return try add(.atom(atom, next: next))
            case .sequence(let parts):
                var start = next
                for part in parts.reversed() { start = try compile(part, next: start) }
                return start
            case .choice(let branches):
                var start = try compile(branches[branches.count - 1], next: next)
                for branch in branches.dropLast().reversed() {
                    start = try add(.split(try compile(branch, next: next), start))
                }
                return start
            case .repetition(let body, let min, let max):
                var rest = next
                if let max {
                    for _ in 0..<(max - min) { rest = try add(.split(try compile(body, next: rest), rest)) }
                } else {
                    let loop = try add(.split(next, next))
                    states[loop] = .split(try compile(body, next: loop), next)
                    rest = loop
                }
                for _ in 0..<min { rest = try compile(body, next: rest) }
                return rest
            }
        }

        func matches(_ text: String) -> Bool {
            var current = closure(of: [start])
            for scalar in text.unicodeScalars {
                var reached: [Int] = []
                for index in current {
                    if case .atom(let atom, let next) = states[index], atom.matches(scalar) { reached.append(next) }
                }
                current = closure(of: reached)
                if current.isEmpty { return false }
            }
            return current.contains(0)
        }

        /// The states that consume a character or accept, reached from `indices` without consuming any.
        private func closure(of indices: [Int]) -> [Int] {
            var seen = [Bool](repeating: false, count: states.count)
            var pending = indices
            var result: [Int] = []
            while let index = pending.popLast() {
                guard !seen[index] else { continue }
                seen[index] = true
                switch states[index] {
                case .split(let first, let second):
                    pending.append(second)
                    pending.append(first)
                case .atom, .accept:
                    result.append(index)
                }
            }
            return result
        }
    }

    struct Parser {
        let scalars: [Unicode.Scalar]
        var position = 0
        var depth = 0

        init(_ scalars: [Unicode.Scalar]) {
            self.scalars = scalars
        }

        private var next: Unicode.Scalar? { position < scalars.count ? scalars[position] : nil }

        mutating func pattern() throws(Failure) -> Node {
            let node = try alternation()
            guard position == scalars.count else { throw .invalid }
            return node
        }

        private mutating func alternation() throws(Failure) -> Node {
            var branches = [try sequence()]
            while next == "|" {
                position += 1
                branches.append(try sequence())
            }
            return branches.count == 1 ? branches[0] : .choice(branches)
        }

        private mutating func sequence() throws(Failure) -> Node {
            var parts: [Node] = []
            while let scalar = next, scalar != "|", scalar != ")" {
                // `^` and `$` hold only at the ends: the whole answer is matched anyway.
                if scalar == "^" || scalar == "$" {
                    guard (scalar == "^" && position == 0) || (scalar == "$" && position == scalars.count - 1) else {
                        throw .unsupported
                    }
                    position += 1
                    continue
                }
                parts.append(try quantified())
            }
            return parts.isEmpty ? .empty : (parts.count == 1 ? parts[0] : .sequence(parts))
        }

        private mutating func quantified() throws(Failure) -> Node {
            let node = try atom()
            let bounds: (Int, Int?)
            switch next {
            case "*", "+", "?":
                bounds = next == "*" ? (0, nil) : (next == "+" ? (1, nil) : (0, 1))
                position += 1
            case "{":
                guard let counted = try counted() else { return node }
                bounds = counted
            default: return node
            }
            try skipLazy()
            // A quantifier on a quantifier (`a**`) is a mistake in the pattern.
            if let scalar = next, scalar == "*" || scalar == "+" || scalar == "?" { throw .invalid }
            return .repetition(node, min: bounds.0, max: bounds.1)
        }

        /// A lazy quantifier (`*?`) matches the same whole answers; a possessive one is refused.
        private mutating func skipLazy() throws(Failure) {
            if next == "?" {
                position += 1
            } else if next == "+" {
                throw .unsupported
            }
        }

        /// `{n}`, `{n,}` or `{n,m}` at the position, or nil (and the position unchanged) when the brace is a literal.
        private mutating func counted() throws(Failure) -> (Int, Int?)? {
            var index = position + 1
            func number() -> Int? {
                var digits = ""
                while index < scalars.count, ("0"..."9").contains(scalars[index]), digits.count < 4 {
                    digits.unicodeScalars.append(scalars[index])
                    index += 1
                }
                return Int(digits)
            }
            guard let low = number() else { return nil }
            var high: Int? = low
            if index < scalars.count, scalars[index] == "," {
                index += 1
                high = number()
            }
            guard index < scalars.count, scalars[index] == "}" else { return nil }
            position = index + 1
            if let high, high < low { throw .invalid }
            guard (high ?? low) <= 100 else { throw .unsupported }
            return (low, high)
        }

        private mutating func atom() throws(Failure) -> Node {
            guard let scalar = next else { throw .invalid }
            position += 1
            switch scalar {
            case "(":
                if next == "?" {
                    position += 1
                    guard next == ":" else { throw .unsupported }
                    position += 1
                }
                depth += 1
                guard depth <= 32 else { throw .unsupported }
                let inner = try alternation()
                guard next == ")" else { throw .invalid }
                position += 1
                depth -= 1
                return inner
            case "[": return .atom(try characterClass())
            case ".": return .atom(.any)
            case "\\": return .atom(try escape(inClass: false))
            case "*", "+", "?", ")": throw .invalid
            default: return .atom(.scalar(scalar))
            }
        }

        private mutating func escape(inClass: Bool) throws(Failure) -> Atom {
            guard let scalar = next else { throw .invalid }
            position += 1
            switch scalar {
            case "d": return .set(ranges: Atom.digit, negated: false)
            case "D": return .set(ranges: Atom.digit, negated: true)
            case "w": return .set(ranges: Atom.word, negated: false)
            case "W": return .set(ranges: Atom.word, negated: true)
            case "s": return .set(ranges: Atom.space, negated: false)
            case "S": return .set(ranges: Atom.space, negated: true)
            case "t": return .scalar("\t")
            case "n": return .scalar("\n")
            case "r": return .scalar("\r")
            case "b" where inClass: return .scalar("\u{8}")
            case "1"..."9", "b", "B", "k", "A", "z", "Z", "G", "p", "P", "u", "x", "c":
                throw .unsupported
            default: return .scalar(scalar)
            }
        }

        /// `[…]` after its opening bracket: ranges, single characters and escaped classes, `^` first to negate.
        private mutating func characterClass() throws(Failure) -> Atom {
            var negated = false
            if next == "^" {
                negated = true
                position += 1
            }
            var ranges: [ClosedRange<UInt32>] = []
            var first = true
            while let scalar = next, scalar != "]" || first {
                first = false
                position += 1
                var low: UInt32
                if scalar == "\\" {
                    switch try escape(inClass: true) {
                    case .scalar(let escaped): low = escaped.value
                    case .set(let more, negated: false):
                        ranges += more
                        continue
                    default: throw .unsupported
                    }
                } else if scalar == "[" {
                    throw .unsupported
                } else {
                    low = scalar.value
                }
                var high = low
                if next == "-", position + 1 < scalars.count, scalars[position + 1] != "]" {
                    position += 1
                    guard let end = next else { throw .invalid }
                    position += 1
                    if end == "\\" {
                        guard case .scalar(let escaped) = try escape(inClass: true) else { throw .invalid }
                        high = escaped.value
                    } else {
                        high = end.value
                    }
                    guard high >= low else { throw .invalid }
                }
                ranges.append(low...high)
            }
            guard next == "]" else { throw .invalid }
            position += 1
            return .set(ranges: ranges, negated: negated)
        }
    }
}
