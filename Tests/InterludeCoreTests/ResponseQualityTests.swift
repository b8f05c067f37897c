import Foundation
import InterludeCore
import Testing

/// The cases of Tests/Vectors/response-quality.json, whose expected values Tests/Vectors/response_quality.py works out
/// with Python's standard library.
struct ResponseQualityVectors: Decodable {
    struct Case: Decodable, CustomTestStringConvertible {
        let name: String
        let definition: InstrumentDefinition
        let answers: Answers
        let itemSeconds: [String: Double]?
        let thresholds: ResponseQuality.Thresholds?
        let expected: ResponseQuality

        var testDescription: String { name }
    }

    let cases: [Case]

    static let loaded: ResponseQualityVectors = {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Vectors/response-quality.json")
        return try! JSONDecoder().decode(ResponseQualityVectors.self, from: Data(contentsOf: url))
    }()
}

@Suite("Response quality: speed, longstring and variability of one response")
struct ResponseQualityTests {
    @Test(
        "each vector's indices and flags are the ones worked out independently",
        arguments: ResponseQualityVectors.loaded.cases)
    func vector(_ vector: ResponseQualityVectors.Case) {
        let quality = ResponseQuality.of(
            vector.definition, answers: vector.answers, itemSeconds: vector.itemSeconds ?? [:],
            thresholds: vector.thresholds ?? .standard)
        let expected = vector.expected
        #expect(quality.scaleItems == expected.scaleItems && quality.timedItems == expected.timedItems)
        #expect(quality.longstring == expected.longstring)
        #expect(quality.flags == expected.flags)
        for (name, value, wanted) in [
            ("fastShare", quality.fastShare, expected.fastShare),
            ("medianSeconds", quality.medianSeconds, expected.medianSeconds),
            ("sd", quality.sd, expected.sd), ("irv", quality.irv, expected.irv),
            ("modeShare", quality.modeShare, expected.modeShare),
        ] {
            #expect(
                Self.close(value, wanted),
                "\(name): \(String(describing: value)), worked out \(String(describing: wanted))")
        }
    }

    @Test("the vectors hold every flag, a case without times and a study's own thresholds")
    func vectorsCover() {
        let cases = ResponseQualityVectors.loaded.cases
        #expect(Set(cases.flatMap(\.expected.flags)) == Set(ResponseQuality.Flag.allCases))
        #expect(cases.contains { $0.itemSeconds == nil && $0.expected.fastShare == nil })
        #expect(cases.contains { $0.thresholds != nil })
        #expect(cases.contains { $0.expected.flags.isEmpty && $0.expected.longstring == $0.expected.scaleItems })
    }

    @Test("times that are not times are left out: negative, infinite, or of items not answered")
    func strangeTimes() {
        let definition = ResponseQualityVectors.loaded.cases[0].definition
        let quality = ResponseQuality.of(
            definition, answers: ["q1": .text("0"), "q2": .text("1")],
            itemSeconds: ["q1": -3, "q2": .infinity, "q3": 0.1])
        #expect(quality.timedItems == 0 && quality.fastShare == nil && quality.medianSeconds == nil)
    }

    static func close(_ value: Double?, _ wanted: Double?) -> Bool {
        switch (value, wanted) {
        case (nil, nil): true
        case (let value?, let wanted?): abs(value - wanted) < 1e-9
        default: false
        }
    }
}
