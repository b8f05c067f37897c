import Foundation
import InterludeCore
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
        #expect(names.isSuperset(of: ["createdAt", "opensAt", "closesAt", "dueAt", "pairedSince", "receivedAt", "publishedAt"]))
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
        #expect(server.subtracting(document).isEmpty, "missing in openapi.yaml: \(server.subtracting(document).sorted())")
        #expect(document.subtracting(server).isEmpty, "unknown to the server: \(document.subtracting(server).sorted())")
    }
}
