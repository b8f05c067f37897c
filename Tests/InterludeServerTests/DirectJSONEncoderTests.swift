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
    static func expectSameAsFoundation<T: Encodable>(_ value: T, sourceLocation: SourceLocation = #_sourceLocation)
        throws
    {
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
        blob: Data([0, 1, 2, 250]), kinds: [.plain, .scored(total: 12, bands: ["low", "high"])],
        flags: [true, nil, false],
        small: -8, large: UInt64.max, ratio: 0.1)

    @Test("writes what JSONEncoder writes: nested objects and arrays, optionals, escapes, numbers, dates, URLs, data")
    func sameAsFoundation() throws {
        try Self.expectSameAsFoundation(Self.nested)
        try Self.expectSameAsFoundation([Self.nested, Self.nested])
        try Self.expectSameAsFoundation(["only": [String]()])
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let library = try InstrumentCatalog.loadLibrary(
            directory: root.appendingPathComponent("Resources/Instruments").path)
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

    /// Sends a value through `Encodable`, past its own writing.
    struct Coded<Value: Encodable>: Encodable {
        let value: Value
        func encode(to encoder: any Encoder) throws { try value.encode(to: encoder) }
    }

    /// Names the properties of `value` left nil: a sample that sets them all notices a field the writer misses.
    static func unset(in value: Any) -> [String] {
        Mirror(reflecting: value).children.compactMap { child in
            String(describing: child.value) == "nil" ? child.label ?? "?" : nil
        }
    }

    static func definition(title: String) -> InstrumentDefinition {
        InstrumentDefinition(
            key: "daily-check", version: 2, title: LocalizedText(en: title),
            sections: [Section(id: "s", items: [Item(id: "mood", type: .text, text: "Mood / today")])])
    }

    static func changes(_ instruments: [InstrumentDefinition]) -> Components.Schemas.SyncChanges {
        let moment = Date(timeIntervalSince1970: 1_790_000_000.5)
        let prompt = Components.Schemas.Prompt(
            id: "6433944c-313f-4e97-b6b1-3b534e421663", instrumentKey: "daily-check", instrumentVersion: 2,
            title: "Daily \"check\" a/b", opensAt: moment, closesAt: moment.addingTimeInterval(1_800),
            status: .completed,
            source: .onDemand, completedAt: moment.addingTimeInterval(60),
            responseId: "0b7f3a9e-52a4-4d2c-9a6e-3f1f0c2d4e5a",
            blocked: true)
        return Components.Schemas.SyncChanges(
            cursor: "c1790000000500", full: true,
            prompts: [
                prompt,
                .init(
                    id: "a", instrumentKey: "k", instrumentVersion: 1, title: "", opensAt: .distantPast,
                    closesAt: Date(timeIntervalSince1970: -1), status: .open, source: .rule),
            ],
            instruments: instruments,
            appointments: [
                .init(
                    id: "ap", title: "Session", startsAt: moment, endsAt: moment, timeZone: "Europe/Berlin", version: 3,
                    bookedBy: .patient)
            ],
            deleted: [.init(entity: .appointment, id: "gone")],
            therapist: .init(id: "t", fullName: "Dr. A", email: "a@example.org"), interventions: [], records: [])
    }

    @Test("a sync answer and its prompts, which write themselves, write what their Encodable form writes")
    func writesThemselves() throws {
        let changes = Self.changes([Self.definition(title: "Daily")])
        #expect(Self.unset(in: changes).isEmpty)
        #expect(Self.unset(in: changes.prompts[0]).isEmpty)
        let written = try Self.direct.encode(changes)
        #expect(written == (try Self.direct.encode(Coded(value: changes))))
        var alone = changes
        alone.therapist = nil
        #expect(try Self.direct.encode(alone) == (try Self.direct.encode(Coded(value: alone))))
        #expect(!String(decoding: try Self.direct.encode(alone), as: UTF8.self).contains("therapist"))
        try Self.expectSameAsFoundation(changes)
        let text = String(decoding: written, as: UTF8.self)
        #expect(text.contains(#""responseId":"0b7f3a9e-52a4-4d2c-9a6e-3f1f0c2d4e5a","blocked":true}"#))
        // Nil optionals are left out; a moment outside the years the digits are written for goes to the format style.
        #expect(text.contains(#""status":"open","source":"rule"}"#))
        #expect(text.contains(#""opensAt":"0001-01-01T00:00:00Z","closesAt":"1969-12-31T23:59:59Z""#))
    }

    @Test("a definition's JSON is kept under its key and version, and written afresh when the definition differs")
    func memoOfDefinitions() throws {
        let first = String(
            decoding: try Self.direct.encode(Self.changes([Self.definition(title: "Daily")])), as: UTF8.self)
        let changed = String(
            decoding: try Self.direct.encode(Self.changes([Self.definition(title: "Changed")])), as: UTF8.self)
        let again = String(
            decoding: try Self.direct.encode(Self.changes([Self.definition(title: "Daily")])), as: UTF8.self)
        #expect(first.contains(#""title":{"en":"Daily"}"#))
        #expect(changed.contains(#""title":{"en":"Changed"}"#) && !changed.contains(#""en":"Daily""#))
        #expect(again == first)
    }
}
