import Foundation
import OpenAPIRuntime
import Testing

@testable import InterludeServer

@Suite("Submission's own operation")
struct SubmitResponseRouteTests {
    /// A decoder configured as the generated server's converter configures it.
    static var decoder: JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            try APIDateTranscoder().decode(try decoder.singleValueContainer().decode(String.self))
        }
        return decoder
    }

    static func body(answers: String, extra: String = "") -> Data {
        Data(
            """
            {"id":"5f0b8f4e-2f6a-4c47-9d3e-6a1c0b7d2e11","promptId":"0c6e1d1a-8b8f-4a61-b7c2-2d4f6e8a9b10",\
            "instrumentKey":"pss-10","version":1,"answers":\(answers),"completedAt":"2026-11-28T06:00:00Z"\(extra)}
            """.utf8)
    }

    @Test("reads every kind of answer as the generated reader does: texts, numbers, booleans, null, lists, objects")
    func sameSubmission() throws {
        let answers = """
            {"text":"3","empty":"","whole":4,"fraction":2.5,"exponent":1e2,"negative":-7,"yes":true,"no":false,\
            "none":null,"codes":["a","b"],"mixed":[1,"x",null,[true]],"object":{"k":"v"},"escaped":"line\\nnext \\u00e9"}
            """
        let extra = """
            ,"startedAt":"2026-11-28T05:58:00Z","context":{"noise":{"dbfs":-40,"durationS":5,\
            "capturedAt":"2026-11-28T05:59:00Z"}},"unknown":1
            """
        for body in [Self.body(answers: answers, extra: extra), Self.body(answers: "{}")] {
            let generated = try Self.decoder.decode(Components.Schemas.ResponseSubmission.self, from: body)
            let read = try Self.decoder.decode(SubmissionReader.self, from: body).submission
            #expect(read == generated)
        }
        let read = try Self.decoder.decode(SubmissionReader.self, from: Self.body(answers: answers)).submission
        #expect(read.answers.value["text"] as? String == "3")
        #expect(read.answers.value["whole"] as? Int == 4)
        #expect(read.answers.value["fraction"] as? Double == 2.5)
        #expect(read.answers.value["yes"] as? Bool == true)
        #expect(read.answers.value["codes"] as? [(any Sendable)?] != nil)
        #expect(read.answers.value.keys.contains("none"))
    }

    @Test("refuses what the generated reader refuses, at the same place")
    func sameRefusals() throws {
        let bodies = [
            Self.body(answers: "[]"), Self.body(answers: "\"3\""), Self.body(answers: "{\"a\":}"),
            Data(#"{"id":"x","promptId":"y","instrumentKey":"k","answers":{},"completedAt":"2026-11-28T06:00:00Z"}"#.utf8),
            Data(#"{"id":1,"promptId":"y","instrumentKey":"k","version":1,"answers":{},"completedAt":"now"}"#.utf8),
            Data(#"{"id":"x","promptId":"y","instrumentKey":"k","version":1.5,"answers":{},"completedAt":"now"}"#.utf8),
            Data(#"{"id":"x","promptId":"y","instrumentKey":"k","version":1,"answers":{},"completedAt":"now"}"#.utf8),
            Data("[1]".utf8), Data("".utf8),
        ]
        for body in bodies {
            let generated = #expect(throws: (any Error).self) {
                try Self.decoder.decode(Components.Schemas.ResponseSubmission.self, from: body)
            }
            let read = #expect(throws: (any Error).self) { try Self.decoder.decode(SubmissionReader.self, from: body) }
            #expect(read.map(Self.place) == generated.map(Self.place), "\(String(decoding: body, as: UTF8.self))")
        }
    }

    @Test("writes the result as the generated operation's encoder writes it")
    func sameResult() throws {
        let when = Date(timeIntervalSince1970: 1_795_000_000.5)
        let result = Components.Schemas.ResponseResult(
            id: "5f0b8f4e-2f6a-4c47-9d3e-6a1c0b7d2e11", promptId: "0c6e1d1a-8b8f-4a61-b7c2-2d4f6e8a9b10",
            instrumentKey: "pss-10", version: 2, title: "Stress \"heute\" / Woche",
            scores: [
                .init(id: "total", title: "Gesamt", value: 17.5, band: .init(level: "moderate", label: "Mittel")),
                .init(id: "partial", title: "Teil"),
            ],
            answers: try OpenAPIObjectContainer(unvalidatedValue: [
                "text": "3", "whole": 4, "fraction": 2.5, "yes": true, "none": nil, "codes": ["a", "b"],
            ]),
            openedAt: when, startedAt: nil, completedAt: when, receivedAt: when.addingTimeInterval(1),
            context: .init(noise: .init(dbfs: -40.25, durationS: 5, capturedAt: when)))
        try DirectJSONEncoderTests.expectSameAsFoundation(result)
    }

    /// The kind of a decoding error and the keys leading to it.
    static func place(_ error: any Error) -> String {
        guard let error = error as? DecodingError else { return "\(error)" }
        return switch error {
        case .typeMismatch(_, let context): "type " + context.codingPath.map(\.stringValue).joined(separator: ".")
        case .valueNotFound(_, let context): "value " + context.codingPath.map(\.stringValue).joined(separator: ".")
        case .keyNotFound(let key, let context):
            "key " + (context.codingPath + [key]).map(\.stringValue).joined(separator: ".")
        case .dataCorrupted(let context): "data " + context.codingPath.map(\.stringValue).joined(separator: ".")
        @unknown default: "other"
        }
    }
}
