import Foundation
import OpenAPIRuntime
import Testing

@testable import InterludeServer

@Suite("Submission's own operation")
struct SubmitResponseRouteTests {
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
}
