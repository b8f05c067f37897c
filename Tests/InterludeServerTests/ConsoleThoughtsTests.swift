import Fluent
import Foundation
import InterludeCore
import Testing
import VaporTesting

@testable import InterludeServer

/// The patient's thoughts on the therapist's console: found by words and days, paged, and example thoughts added.
@Suite("Thoughts on the console")
struct ConsoleThoughtsTests {
    @Test(
        "the therapist finds thoughts by words and days, pages to older ones, and a wrong day is named beside its field"
    )
    func findAndPage() async throws {
        try await withTestApp { app in
            // setup
            let (console, patient, patientID, _) = try await ConsoleScheduleTests().practice(app)
            for index in 0..<23 {
                let reply = try await patient.send(
                    .POST, "/me/thoughts/occurrences",
                    json: ThoughtAPITests.occurrence(
                        app, text: "Thought number \(index)", hoursAgo: Double(23 - index) * 24,
                        extra: [
                            "location": ["latitude": 48.2082, "longitude": 16.3738], "note": .string("Note \(index)"),
                        ]))
                try #require(reply.status == .created, "\(reply.text)")
            }
            let zone = TimeZone(identifier: "Europe/Vienna")!
            let threeDaysAgo = LocalDate(app.clock.now.addingTimeInterval(-3 * 86_400), in: zone)

            // act
            let patientPage = try await console.get("/console/patients/\(patientID)")
            let first = try await console.get("/console/patients/\(patientID)/thoughts")
            let olderLink = try #require(first.html.firstMatch(of: /href="([^"]+)" id="older-thoughts"/)?.output.1)
            let second = try await console.get(String(olderLink).replacingOccurrences(of: "&amp;", with: "&"))
            let found = try await console.get("/console/patients/\(patientID)/thoughts?q=NUMBER%20%201")
            let days = try await console.get("/console/patients/\(patientID)/thoughts?from=\(threeDaysAgo)&to=")
            let wrong = try await console.get("/console/patients/\(patientID)/thoughts?from=last-week")

            // verify
            #expect(patientPage.html.contains("href=\"/console/patients/\(patientID.uuidString)/thoughts\""))
            #expect(
                first.status == .ok && first.html.contains("Thought number 22")
                    && !first.html.contains("Thought number 2<"))
            #expect(first.html.components(separatedBy: "<article class=\"thought\">").count - 1 == 20)
            #expect(
                first.html.contains("48.2082, 16.3738") && first.html.contains("Note 22") && first.html.contains("+5"))
            #expect(second.html.components(separatedBy: "<article class=\"thought\">").count - 1 == 3)
            #expect(second.html.contains("Thought number 0") && !second.html.contains("older-thoughts"))
            let foundTitles = found.html.matches(of: /<h3>(Thought number \d+)/).map { String($0.output.1) }
            #expect(Set(foundTitles) == Set(["Thought number 1"] + (10...19).map { "Thought number \($0)" }))
            #expect(days.html.components(separatedBy: "<article class=\"thought\">").count - 1 == 3)
            #expect(wrong.status == .unprocessableEntity && wrong.html.contains("id=\"from-error\""))
            let reads = try await AuditEventRecord.query(on: app.database).filter(
                \.$action == AuditAction.recordsRead.rawValue
            ).all()
            #expect(reads.contains { $0.target == "thoughts" && $0.subjectID == patientID })
        }
    }

    @Test("an example thought is added once, marked as the therapist's; empty words are named and nothing is added")
    func addExample() async throws {
        try await withTestApp { app in
            // setup
            let (console, patient, patientID, _) = try await ConsoleScheduleTests().practice(app)
            let page = try await console.get("/console/patients/\(patientID)/thoughts")

            // act
            let added = try await console.post(
                "/console/patients/\(patientID)/thoughts", [("text", "I must never make mistakes")])
            let again = try await console.post(
                "/console/patients/\(patientID)/thoughts", [("text", "i must NEVER make mistakes")])
            let empty = try await console.post("/console/patients/\(patientID)/thoughts", [("text", "   ")])
            let onPhone = try await patient.send(.GET, "/me/thoughts").decoded([Components.Schemas.Thought].self)

            // verify
            #expect(page.html.contains("has recorded no thoughts yet"))
            #expect(
                added.status == .created && added.html.contains("Added. It reaches the patient")
                    && added.html.contains("Added by the therapist"))
            #expect(again.status == .ok && again.html.contains("has these words on their list already"))
            #expect(empty.status == .unprocessableEntity && empty.html.contains("id=\"text-error\""))
            #expect(onPhone.map(\.text) == ["I must never make mistakes"] && onPhone[0].origin == .therapist)
        }
    }
}
