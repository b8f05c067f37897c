import Foundation

/// One answer as it travels in JSON: a boolean, a number, a text (also option codes, dates and times) or a list of
/// option codes (multiple choice).
public enum AnswerValue: Codable, Hashable, Sendable {
    case bool(Bool)
    case number(Double)
    case text(String)
    case list([String])

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let bool = try? container.decode(Bool.self) {
            self = .bool(bool)
        } else if let number = try? container.decode(Double.self) {
            self = .number(number)
        } else if let text = try? container.decode(String.self) {
            self = .text(text)
        } else if let list = try? container.decode([String].self) {
            self = .list(list)
        } else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "An answer is a boolean, a number, a text or a list of texts")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .bool(let value): try container.encode(value)
        case .number(let value):
            if value == value.rounded(), abs(value) < 1e15 {
                try container.encode(Int64(value))
            } else {
                try container.encode(value)
            }
        case .text(let value): try container.encode(value)
        case .list(let value): try container.encode(value)
        }
    }

    public var number: Double? {
        if case .number(let value) = self { return value }
        return nil
    }

    public var text: String? {
        if case .text(let value) = self { return value }
        return nil
    }
}

/// The answers of one response, keyed by item id.
public typealias Answers = [String: AnswerValue]
