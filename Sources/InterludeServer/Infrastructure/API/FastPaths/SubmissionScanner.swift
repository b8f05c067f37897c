import Foundation
import OpenAPIRuntime

/// Reads a submission in the shape the apps send it straight from its bytes: the ids, the instrument's key and
/// version, the two instants, answers that are texts, whole numbers, booleans, nulls or lists of those, and the
/// whole milliseconds spent per item.
///
/// Anything else — a context, a number with a fraction or an exponent, a key it does not know or meets twice, a
/// document that is not well formed — it leaves alone (nil), and the generated decoder reads the body and names what
/// is wrong. So it answers only what that decoder would answer, and a test holds the two to the same result. Foundation's decoder, through `Decodable`'s containers, was a twentieth of a submission's CPU.
struct SubmissionScanner {
    private let bytes: UnsafeRawBufferPointer
    private var index = 0

    private init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    static func read(_ data: Data) -> Components.Schemas.ResponseSubmission? {
        data.withUnsafeBytes { bytes in
            var scanner = SubmissionScanner(bytes)
            return scanner.submission()
        }
    }

    /// One answer, as the generated decoder would hand it on.
    private enum Answer {
        case text(String)
        case whole(Int)
        case flag(Bool)
        case none
        case list([Answer])

        var value: (any Sendable)? {
            switch self {
            case .text(let text): text
            case .whole(let number): number
            case .flag(let flag): flag
            case .none: nil
            case .list(let answers): answers.map(\.value)
            }
        }
    }

    private mutating func submission() -> Components.Schemas.ResponseSubmission? {
        var id: String?
        var promptID: String?
        var instrumentKey: String?
        var version: Int?
        var completedAt: Date?
        var answers: [String: (any Sendable)?]?
        var startedAt: Date??
        var itemTimes: [String: Int]?
        let read = members { scanner, key in
            switch key {
            case "id" where id == nil: return Self.set(&id, scanner.string())
            case "promptId" where promptID == nil: return Self.set(&promptID, scanner.string())
            case "instrumentKey" where instrumentKey == nil: return Self.set(&instrumentKey, scanner.string())
            case "version" where version == nil: return Self.set(&version, scanner.whole())
            case "completedAt" where completedAt == nil: return Self.set(&completedAt, scanner.instant())
            case "startedAt" where startedAt == nil:
                startedAt = scanner.literal("null") ? .some(nil) : scanner.instant().map { .some($0) }
                return startedAt != nil
            case "answers" where answers == nil:
                var values: [String: (any Sendable)?] = [:]
                guard
                    scanner.members({ scanner, item in
                        guard values[item] == nil, let answer = scanner.answer() else { return false }
                        values[item] = .some(answer.value)
                        return true
                    })
                else { return false }
                answers = values
                return true
            case "itemTimesMs" where itemTimes == nil:
                var times: [String: Int] = [:]
                guard
                    scanner.members({ scanner, item in
                        guard times[item] == nil, let milliseconds = scanner.whole() else { return false }
                        times[item] = milliseconds
                        return true
                    })
                else { return false }
                itemTimes = times
                return true
            default: return false
            }
        }
        skipSpace()
        guard read, index == bytes.count, let id, let promptID, let instrumentKey, let version, let completedAt,
            let answers, let container = try? OpenAPIObjectContainer(unvalidatedValue: answers)
        else { return nil }
        return .init(
            id: id, promptId: promptID, instrumentKey: instrumentKey, version: version, answers: container,
            startedAt: startedAt ?? nil, completedAt: completedAt,
            itemTimesMs: itemTimes.map { .init(additionalProperties: $0) })
    }

    /// Keeps a field's value; false when there was none to read.
    private static func set<Value>(_ field: inout Value?, _ value: Value?) -> Bool {
        field = value
        return value != nil
    }

    /// An object whose members `member` reads (false: it could not); false when the object is not well formed.
    private mutating func members(_ member: (inout SubmissionScanner, String) -> Bool) -> Bool {
        skipSpace()
        guard take(UInt8(ascii: "{")) else { return false }
        skipSpace()
        if take(UInt8(ascii: "}")) { return true }
        while true {
            skipSpace()
            guard let key = string() else { return false }
            skipSpace()
            guard take(UInt8(ascii: ":")) else { return false }
            skipSpace()
            guard member(&self, key) else { return false }
            skipSpace()
            if take(UInt8(ascii: ",")) { continue }
            return take(UInt8(ascii: "}"))
        }
    }

    private mutating func answer(nested: Bool = false) -> Answer? {
        guard index < bytes.count else { return nil }
        switch bytes[index] {
        case UInt8(ascii: "\""): return string().map(Answer.text)
        case UInt8(ascii: "t"): return literal("true") ? .flag(true) : nil
        case UInt8(ascii: "f"): return literal("false") ? .flag(false) : nil
        case UInt8(ascii: "n"): return literal("null") ? Answer.none : nil
        case UInt8(ascii: "[") where !nested:
            index += 1
            var list: [Answer] = []
            skipSpace()
            if take(UInt8(ascii: "]")) { return .list(list) }
            while true {
                skipSpace()
                guard let element = answer(nested: true) else { return nil }
                list.append(element)
                skipSpace()
                if take(UInt8(ascii: ",")) { continue }
                return take(UInt8(ascii: "]")) ? .list(list) : nil
            }
        default: return whole().map(Answer.whole)
        }
    }

    /// A whole number as JSON writes one (`0`, `-12`), within `Int`; nil for a fraction, an exponent or `-0`.
    private mutating func whole() -> Int? {
        let negative = take(UInt8(ascii: "-"))
        let start = index
        var magnitude = 0
        while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) {
            let (times, overflowTimes) = magnitude.multipliedReportingOverflow(by: 10)
            let (sum, overflowSum) = times.addingReportingOverflow(Int(bytes[index] - UInt8(ascii: "0")))
            guard !overflowTimes, !overflowSum else { return nil }
            magnitude = sum
            index += 1
        }
        let digits = index - start
        guard digits > 0, digits == 1 || bytes[start] != UInt8(ascii: "0"), !(negative && magnitude == 0) else {
            return nil
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") || bytes[index] | 0x20 == UInt8(ascii: "e") {
            return nil
        }
        return negative ? -magnitude : magnitude
    }

    private mutating func instant() -> Date? {
        string().flatMap { try? APIDateTranscoder().decode($0) }
    }

    /// A string, its escapes resolved; nil when it is not one, holds a raw control character, a lone surrogate or
    /// bytes that are not UTF-8.
    private mutating func string() -> String? {
        guard take(UInt8(ascii: "\"")) else { return nil }
        let start = index
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "\""):
                defer { index += 1 }
                return String(validating: UnsafeRawBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
            case UInt8(ascii: "\\"):
                return escapedString(from: start)
            case 0..<0x20:
                return nil
            default:
                index += 1
            }
        }
        return nil
    }

    private mutating func escapedString(from start: Int) -> String? {
        var utf8 = Array(bytes[start..<index])
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            switch byte {
            case UInt8(ascii: "\""):
                return String(validating: utf8, as: UTF8.self)
            case UInt8(ascii: "\\"):
                guard index < bytes.count else { return nil }
                let escape = bytes[index]
                index += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): utf8.append(escape)
                case UInt8(ascii: "b"): utf8.append(0x08)
                case UInt8(ascii: "f"): utf8.append(0x0C)
                case UInt8(ascii: "n"): utf8.append(0x0A)
                case UInt8(ascii: "r"): utf8.append(0x0D)
                case UInt8(ascii: "t"): utf8.append(0x09)
                case UInt8(ascii: "u"):
                    guard let scalar = escapedScalar() else { return nil }
                    UTF8.encode(scalar) { utf8.append($0) }
                default: return nil
                }
            case 0..<0x20:
                return nil
            default:
                utf8.append(byte)
            }
        }
        return nil
    }

    /// The scalar a `\u` escape names (after its `\u`), with the low half of a surrogate pair when it is the high.
    private mutating func escapedScalar() -> Unicode.Scalar? {
        guard let unit = hexUnit() else { return nil }
        switch unit {
        case 0xD800...0xDBFF:
            guard take(UInt8(ascii: "\\")), take(UInt8(ascii: "u")), let low = hexUnit(),
                (0xDC00...0xDFFF).contains(low)
            else {
                return nil
            }
            return Unicode.Scalar(0x10000 + ((UInt32(unit) - 0xD800) << 10) + (UInt32(low) - 0xDC00))
        case 0xDC00...0xDFFF:
            return nil
        default:
            return Unicode.Scalar(unit)
        }
    }

    private mutating func hexUnit() -> UInt16? {
        var unit: UInt16 = 0
        for _ in 0..<4 {
            guard index < bytes.count else { return nil }
            let digit: UInt8
            switch bytes[index] {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = bytes[index] - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = bytes[index] - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = bytes[index] - UInt8(ascii: "A") + 10
            default: return nil
            }
            unit = unit << 4 | UInt16(digit)
            index += 1
        }
        return unit
    }

    private mutating func literal(_ word: StaticString) -> Bool {
        let end = index + word.utf8CodeUnitCount
        guard end <= bytes.count, word.withUTF8Buffer({ bytes[index..<end].elementsEqual($0) }) else { return false }
        index = end
        return true
    }

    private mutating func take(_ byte: UInt8) -> Bool {
        guard index < bytes.count, bytes[index] == byte else { return false }
        index += 1
        return true
    }

    private mutating func skipSpace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x0A, 0x0D, 0x09: index += 1
            default: return
            }
        }
    }
}
