import Foundation
import InterludeCore
import PropertyBased
import Testing

@testable import InterludeServer

@Suite("Every date-time in every JSON answer is ISO 8601")
struct DateTimeContractTests {
    @Test("the date-time properties come from the API document, and numbers or local times among them are caught")
    func contract() {
        // setup
        let names = DateTimeContract.names
        let body = Data(
            """
            {"createdAt": 1772438400, "items": [{"opensAt": "2026-03-02 09:00"}, {"opensAt": "2026-03-02T09:00:00+01:00"}],
             "receivedAt": "2026-03-02T08:00:00.250Z", "completedAt": null, "title": 5}
            """.utf8)

        // act
        let violations = DateTimeContract.violations(in: body).sorted()

        // verify
        #expect(
            names.isSuperset(of: [
                "createdAt", "opensAt", "closesAt", "dueAt", "pairedSince", "receivedAt", "publishedAt",
            ]))
        #expect(!names.contains("schema") && !names.contains("title"))
        #expect(violations == ["$.createdAt: 1772438400", "$.items[0].opensAt: 2026-03-02 09:00"])

    }
}

@Suite("Contract: field problem codes")
struct FieldCodeContractTests {
    @Test("every code a field problem can carry is one the API document lists, and the other way round")
    func codesMatch() {
        // setup / act
        let document = Set(Components.Schemas.FieldProblem.CodePayload.allCases.map(\.rawValue))
        let server = Set(FieldError.Code.allCases.map(\.rawValue))

        // verify
        #expect(
            server.subtracting(document).isEmpty, "missing in openapi.yaml: \(server.subtracting(document).sorted())")
        #expect(document.subtracting(server).isEmpty, "unknown to the server: \(document.subtracting(server).sorted())")
    }
}

@Suite("API dates are written as the ISO 8601 format style writes them")
struct APIDateWritingTests {
    static let style = Date.ISO8601FormatStyle()

    @Test(
        "moments at the edges of days, months, leap years, centuries and the supported years",
        arguments: [
            0, -1, 86_399, 86_400, 951_782_400, 951_868_799, 4_107_542_400, -2_208_988_800, 253_402_300_799,
            1_772_438_400.999, -0.5, 1_709_164_800, -2_203_891_200,
        ] as [Double])
    func edges(seconds: Double) throws {
        let date = Date(timeIntervalSince1970: seconds)
        #expect(try APIDateTranscoder().encode(date) == Self.style.format(date))
        #expect(APIDateTranscoder.utcText(date) != nil)
    }

    @Test("any moment between the years 1900 and 9999 is written alike")
    func anyMoment() async throws {
        await propertyCheck(count: 5000, input: Gen.int(in: -2_208_988_800...253_402_300_799)) { seconds in
            let date = Date(timeIntervalSince1970: Double(seconds))
            #expect(APIDateTranscoder.utcText(date) == Self.style.format(date))
        }
    }

    @Test(
        "outside those years the format style writes the date",
        arguments: [253_402_300_800, -2_208_988_801, -62_135_596_800] as [Double])
    func outside(seconds: Double) throws {
        let date = Date(timeIntervalSince1970: seconds)
        #expect(APIDateTranscoder.utcText(date) == nil)
        #expect(try APIDateTranscoder().encode(date) == Self.style.format(date))
    }
}
