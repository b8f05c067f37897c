import Foundation
import InterludeCore
import OpenAPIRuntime
import Testing

@testable import InterludeServer

@Suite("Direct JSON encoder")
struct DirectJSONEncoderTests {
    static let direct = DirectJSONEncoder(dates: APIDateTranscoder())

    static var foundation: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(try APIDateTranscoder().encode(date))
        }
        return encoder
    }

    /// What both encoders wrote, read back: the same JSON whatever the order of the keys.
    static func expectSameAsFoundation<T: Encodable>(_ value: T, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let direct = try JSONDecoder().decode(OpenAPIValueContainer.self, from: Data(Self.direct.encode(value)))
        let foundation = try JSONDecoder().decode(OpenAPIValueContainer.self, from: foundation.encode(value))
        #expect(direct == foundation, sourceLocation: sourceLocation)
    }

    enum Kind: Codable, Equatable {
        case plain
        case scored(total: Int, bands: [String])
    }

    struct Nested: Codable, Equatable {
        var title: String
        var optional: String?
        var empty: String?
        var numbers: [Double]
        var grid: [[Int]]
        var counts: [String: Int]
        var when: Date
        var link: URL
        var blob: Data
        var kinds: [Kind]
        var flags: [Bool?]
        var small: Int8
        var large: UInt64
        var ratio: Float
    }

    static let nested = Nested(
        title: "Wie geht's? \"quoted\" a/b \\ tab\there\nline \u{01} 😊", optional: "da", empty: nil,
        numbers: [1, 0.1, -2.5e-7, 1e21, 12.75], grid: [[1, 2], [], [Int.min, Int.max]], counts: ["a": 1, "b/c": 2],
        when: Date(timeIntervalSince1970: 1_790_000_000.75), link: URL(string: "https://example.org/a?b=c")!,
        blob: Data([0, 1, 2, 250]), kinds: [.plain, .scored(total: 12, bands: ["low", "high"])], flags: [true, nil, false],
        small: -8, large: UInt64.max, ratio: 0.1)

    @Test("writes what JSONEncoder writes: nested objects and arrays, optionals, escapes, numbers, dates, URLs, data")
    func sameAsFoundation() throws {
        try Self.expectSameAsFoundation(Self.nested)
        try Self.expectSameAsFoundation([Self.nested, Self.nested])
        try Self.expectSameAsFoundation(["only": [String]()])
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let library = try InstrumentCatalog.loadLibrary(directory: root.appendingPathComponent("Resources/Instruments").path)
        #expect(library.count > 3)
        try Self.expectSameAsFoundation(library)
    }

    @Test("compact, keys in the order encoded, `/` escaped, whole doubles without a fraction")
    func exactText() throws {
        struct Ordered: Encodable {
            var zebra = 1
            var apple = "a/b\"c\u{1f}"
            var whole = 3.0
            var none: Int? = nil
            var list: [Int?] = [1, nil]
        }
        let text = String(decoding: try Self.direct.encode(Ordered()), as: UTF8.self)
        #expect(text == #"{"zebra":1,"apple":"a\/b\"c\u001f","whole":3,"list":[1,null]}"#)
        let date = Date(timeIntervalSince1970: 0)
        #expect(String(decoding: try Self.direct.encode([date]), as: UTF8.self) == #"["1970-01-01T00:00:00Z"]"#)
    }

    @Test("NaN and infinity are refused, as JSONEncoder refuses them")
    func notANumber() {
        #expect(throws: EncodingError.self) { try Self.direct.encode([Double.nan]) }
        #expect(throws: EncodingError.self) { try Self.direct.encode(["x": Double.infinity]) }
    }

    /// Writes into its object after it opened a nested one beside it, which a writer that never goes back cannot do.
    struct Interleaved: Encodable {
        enum Keys: String, CodingKey { case first, second, inner }
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Keys.self)
            var first = container.nestedContainer(keyedBy: Keys.self, forKey: .first)
            try container.encode(1, forKey: .second)
            try first.encode(2, forKey: .inner)
        }
    }

    /// Uses a super-encoder, as a subclass does.
    struct WithSuper: Encodable {
        enum Keys: String, CodingKey { case value }
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Keys.self)
            try container.encode(1, forKey: .value)
            try "base".encode(to: container.superEncoder())
        }
    }

    @Test("a container used out of order or a super-encoder is refused; a second part of one object is welcome")
    func outOfOrder() throws {
        #expect(throws: DirectJSONEncoder.OutOfOrder.self) { try Self.direct.encode(Interleaved()) }
        #expect(throws: DirectJSONEncoder.OutOfOrder.self) { try Self.direct.encode(WithSuper()) }

        struct TwoParts: Encodable {
            enum Keys: String, CodingKey { case a, b }
            func encode(to encoder: any Encoder) throws {
                var first = encoder.container(keyedBy: Keys.self)
                var nested = first.nestedUnkeyedContainer(forKey: .a)
                try nested.encode(1)
                var second = encoder.container(keyedBy: Keys.self)
                try second.encode(2, forKey: .b)
            }
        }
        #expect(String(decoding: try Self.direct.encode(TwoParts()), as: UTF8.self) == #"{"a":[1],"b":2}"#)
        try Self.expectSameAsFoundation(TwoParts())
    }
}
