import Foundation
@_spi(Generated) import OpenAPIRuntime
import PropertyBased
import Testing

@testable import InterludeServer

/// A submission's body is read straight from its bytes when it has the shape apps send; every other body is left to
/// the generated decoder's reading. Either way the handler gets what that reading gives, or the problem it names.
@Suite("Submissions read from their bytes: as the generated decoder reads them, or left to it")
struct SubmissionScannerTests {
    /// The reading of a body the scanner leaves: the operation's converter with the generated decoder.
    static func decoded(_ body: String) async -> Components.Schemas.ResponseSubmission? {
        let converter = Converter(configuration: .init(dateTranscoder: APIDateTranscoder(), jsonEncodingOptions: []))
        return try? await converter.getRequiredRequestBodyAsJSON(
            Components.Schemas.ResponseSubmission.self, from: HTTPBody(body), transforming: { $0 })
    }

    static func decoded(bytes: [UInt8]) async -> Components.Schemas.ResponseSubmission? {
        let converter = Converter(configuration: .init(dateTranscoder: APIDateTranscoder(), jsonEncodingOptions: []))
        return try? await converter.getRequiredRequestBodyAsJSON(
            Components.Schemas.ResponseSubmission.self, from: HTTPBody(bytes), transforming: { $0 })
    }

    static func scanned(_ body: String) -> Components.Schemas.ResponseSubmission? {
        SubmissionScanner.read(Data(body.utf8))
    }

    static let head =
        #""id":"7c0a7c4e-27b5-4b52-9d0e-0b7d1c8d2f11","promptId":"0b1e4b0c-9f7e-4c35-a6a4-3f4a5d2e8b10""#
        + #","instrumentKey":"pss-10","version":1"#
    static let completed = #""completedAt":"2026-11-28T10:00:00Z""#

    static let read: [String] = [
        "{\(head),\"answers\":{\"a\":\"2\",\"b\":3,\"c\":true,\"d\":null,\"e\":[\"x\",4,false,null],\"f\":[]},\(completed)}",
        "{\(head),\"answers\":{},\(completed),\"startedAt\":\"2026-11-28T09:58:00.125Z\"}",
        "{\(head),\"answers\":{\"a\":-12,\"b\":0,\"c\":\(Int.max)},\"startedAt\":null,\(completed)}",
        "{\(head),\"answers\":{\"a\":\"quote \\\" backslash \\\\ slash \\/ \\b\\f\\n\\r\\t é 😀 \\u00e9 \\ud83d\\ude00 \\u0041\"},\(completed)}",
        " {\n  \(head.replacingOccurrences(of: ",", with: " ,\r\n\t")) ,\n \"answers\" : { \"a\" : [ \"x\" , 1 ] } ,\n \(completed) }\n ",
        "{\(completed),\"answers\":{\"é-ü\":\"Grüß Gott\"},\(head)}",
        "{\(head),\"answers\":{\"a\":\"2\"},\"itemTimesMs\":{\"a\":1250,\"b\":0},\(completed)}",
        "{\(head),\"itemTimesMs\":{},\"answers\":{},\(completed)}",
    ]

    @Test("the shapes apps send read exactly as the generated decoder reads them", arguments: read)
    func sameReading(body: String) async throws {
        let scanned = try #require(Self.scanned(body))
        let decoded = try #require(await Self.decoded(body))
        #expect(scanned == decoded)
    }

    static let leftAlone: [String] = [
        "{\(head),\"answers\":{\"a\":\"2\"},\(completed),\"context\":{\"noise\":{\"dbfs\":-40,\"durationS\":5,\"capturedAt\":\"2026-11-28T09:59:00Z\"}}}",
        "{\(head),\"answers\":{\"a\":\"2\"},\(completed),\"extra\":1}",
        "{\(head),\"answers\":{\"a\":2.5},\(completed)}",
        "{\(head),\"answers\":{\"a\":1e2},\(completed)}",
        "{\(head),\"answers\":{\"a\":99999999999999999999},\(completed)}",
        "{\(head),\"answers\":{\"a\":[[1]]},\(completed)}",
        "{\(head),\"answers\":{\"a\":{\"b\":1}},\(completed)}",
    ]

    @Test(
        "a context, a fraction, a number past Int, a nested answer or an unknown key is left to the generated decoder",
        arguments: leftAlone)
    func leftToDecoder(body: String) async throws {
        #expect(Self.scanned(body) == nil)
        #expect(await Self.decoded(body) != nil, "the decoder reads it")
    }

    static let malformed: [String] = [
        "{\(head),\"answers\":{\"a\":\"2\"},}",
        "{\(head),\"answers\":{\"a\":\"2\"},\(completed)",
        "{\(head),\"answers\":{\"a\":\"2\"},\(completed)} x",
        "{\(head),\"answers\":{\"a\":01},\(completed)}",
        "{\(head),\"answers\":{\"a\":\"\\ud800\"},\(completed)}",
        "{\(head),\"answers\":{\"a\":\"tab\there\"},\(completed)}",
        "{\(head),\"answers\":{\"a\":\"2\"}}",
        "{\(head),\"answers\":{\"a\":\"2\"},\"completedAt\":\"yesterday\"}",
        "{\(head),\"answers\":{\"a\":\"2\"},\"completedAt\":1}",
        "{\(head),\"answers\":{\"a\":tru},\(completed)}",
        "{\(head),\"answers\":{\"a\":\"2\"},\"itemTimesMs\":{\"a\":\"1250\"},\(completed)}",
        "{\(head),\"answers\":{\"a\":\"2\"},\"itemTimesMs\":{\"a\":1.5},\(completed)}",
        "[\(completed)]",
        "",
    ]

    @Test(
        "a body that is not a well-formed submission is left to the decoder, which refuses it too", arguments: malformed
    )
    func malformedLeft(body: String) async {
        #expect(Self.scanned(body) == nil)
        #expect(await Self.decoded(body) == nil)
    }

    @Test("a repeated key is left to the decoder")
    func repeatedKey() {
        #expect(Self.scanned("{\(Self.head),\"answers\":{\"a\":\"1\",\"a\":\"2\"},\(Self.completed)}") == nil)
        #expect(Self.scanned("{\(Self.head),\"version\":2,\"answers\":{},\(Self.completed)}") == nil)
        #expect(
            Self.scanned("{\(Self.head),\"answers\":{},\"itemTimesMs\":{\"a\":1,\"a\":2},\(Self.completed)}") == nil)
    }

    @Test("bytes that are not UTF-8 in a text are left to the decoder")
    func invalidUTF8() {
        var bytes = Data("{\(Self.head),\"answers\":{\"a\":\"".utf8)
        bytes.append(contentsOf: [0xC3, 0x28])
        bytes.append(contentsOf: Data("\"},\(Self.completed)}".utf8))
        #expect(SubmissionScanner.read(bytes) == nil)
    }

    @Test(
        "any answers JSONEncoder writes — texts of any characters, whole numbers, booleans, nulls, lists — read the same"
    )
    func randomAnswers() async throws {
        let text = Gen.character(in: "\u{0}"..."\u{D7FF}").string(of: 0...12)
        let answer = Gen<JSONValue>.oneOf(
            text.map { JSONValue.string($0) }.eraseToAny(),
            Gen.int(in: -1_000_000...1_000_000).map { JSONValue.int($0) }.eraseToAny(),
            Gen.int(in: 0...2).map { $0 == 2 ? JSONValue.absent : .bool($0 == 1) }.eraseToAny(),
            text.array(of: 0...3).map { JSONValue.array($0.map(JSONValue.string)) }.eraseToAny())
        await propertyCheck(
            count: 300, input: Gen.lowercaseLetter.string(of: 1...6).array(of: 0...6), answer.array(of: 6)
        ) {
            keys, values in
            var answers: [String: JSONValue] = [:]
            for (key, value) in zip(keys, values) { answers[key] = value }
            let body: JSONValue = [
                "id": "7c0a7c4e-27b5-4b52-9d0e-0b7d1c8d2f11", "promptId": "0b1e4b0c-9f7e-4c35-a6a4-3f4a5d2e8b10",
                "instrumentKey": "pss-10", "version": 1, "answers": .object(answers),
                "completedAt": "2026-11-28T10:00:00Z",
            ]
            let json = String(decoding: (try? JSONEncoder().encode(body)) ?? Data(), as: UTF8.self)
            let scanned = Self.scanned(json)
            #expect(scanned != nil, "\(json)")
            #expect(scanned == (await Self.decoded(json)), "\(json)")
        }
    }

    /// Bytes a mutation puts in: JSON's punctuation, digits, letters of its literals, escapes, control characters,
    /// and bytes that start, continue or break UTF-8.
    static let mutationBytes: [UInt8] =
        Array(#"{}[]":,\ -+.0123456789eEtrufalsn/bu"#.utf8) + [
            0, 9, 10, 13, 0x1F, 0x7F, 0x80, 0xBF, 0xC3, 0xE2, 0xF0, 0xFF,
        ]

    /// `body` with one to four of its bytes replaced, removed, doubled or put in, or cut short.
    static func mutated(_ body: [UInt8], using random: inout some RandomNumberGenerator) -> [UInt8] {
        var bytes = body
        for _ in 0..<Int.random(in: 1...4, using: &random) where !bytes.isEmpty {
            let place = Int.random(in: 0..<bytes.count, using: &random)
            switch Int.random(in: 0..<5, using: &random) {
            case 0: bytes[place] = mutationBytes.randomElement(using: &random)!
            case 1: bytes.remove(at: place)
            case 2: bytes.insert(bytes[place], at: place)
            case 3: bytes.insert(mutationBytes.randomElement(using: &random)!, at: place)
            default: bytes.removeSubrange(place...)
            }
        }
        return bytes
    }

    @Test(
        "mutated and random bodies: whatever the scanner reads, the generated decoder reads the same; it never reads more"
    )
    func fuzzedBodies() async {
        var random = SystemRandomNumberGenerator()
        let seeds = Self.read.map { Array($0.utf8) } + Self.leftAlone.map { Array($0.utf8) }
        var bodies = (0..<3_000).map { index in Self.mutated(seeds[index % seeds.count], using: &random) }
        bodies += (0..<300).map { _ in
            (0..<Int.random(in: 0...80, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
        }
        var readByBoth = 0
        for body in bodies {
            guard let scanned = SubmissionScanner.read(Data(body)) else { continue }
            let decoded = await Self.decoded(bytes: body)
            #expect(scanned == decoded, "\(String(decoding: body, as: UTF8.self))")
            if decoded != nil { readByBoth += 1 }
        }
        // Some mutations leave a readable body (a changed digit, a letter in a text): the comparison is not empty.
        #expect(readByBoth > 100)
    }
}
