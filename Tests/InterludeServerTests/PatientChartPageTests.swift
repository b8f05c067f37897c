import Fluent
import Foundation
import InterludeCore
import Testing
import VaporTesting

@testable import InterludeServer

@Suite("The patient's chart: what needs attention first, the histories a page at a time")
struct PatientChartPageTests {
    static let mood = "mood-vas"

    /// A year of a daily mood scale (one day in seven missed) and a weekly PHQ-9, answered through the response
    /// service as time passes; then a PHQ-9 with item 9 answered through the API, which raises the built-in alert.
    func yearOfHistory(_ app: TestContext) async throws -> (browser: ConsoleBrowser, patientID: UUID) {
        let (therapist, _) = try await app.staff("therapist", "berger@praxis.example")
        let (patient, patientID) = try await app.patient("ada@example.org", name: "Ada")
        try await app.pair(patient, with: therapist)
        let practice = try #require(
            try await EnrollmentRecord.query(on: app.database).filter(\.$patient.$id == patientID).first()
        ).$study.id
        let person = try #require(try await UserRecord.find(patientID, on: app.database))
        let responses = ResponseService(database: app.database, services: app.app.interlude)
        for day in 0..<365 {
            let weekly = day % 7 == 0
            let prompts: [(key: String, answers: Answers?)] =
                [
                    (Self.mood, day % 7 == 3 ? nil : ["mood": .number(Double(30 + day % 50))])
                ]
                + (weekly
                    ? [
                        (
                            "phq-9",
                            Dictionary(
                                uniqueKeysWithValues: (1...8).map {
                                    ("phq9_\($0)", AnswerValue.text(day % 14 == 0 ? "1" : "2"))
                                } + [("phq9_9", .text("0"))])
                        )
                    ] : [])
            for (key, answers) in prompts {
                let prompt = PromptRecord(
                    patientID: patientID, studyID: practice, assignedBy: nil, instrumentKey: key, instrumentVersion: 1,
                    opensAt: app.clock.now, closesAt: app.clock.now.addingTimeInterval(12 * 3600), source: .schedule,
                    now: app.clock.now)
                try await prompt.create(on: app.database)
                guard let answers else { continue }
                _ = try await responses.submit(
                    .init(
                        id: UUID(), promptID: try prompt.requireID(), instrumentKey: key, version: 1, answers: answers,
                        startedAt: nil,
                        completedAt: app.clock.now),
                    patient: person)
            }
            app.clock.advance(by: 86_400)
        }
        let questionnaires = QuestionnaireAPITests()
        let again = try await app.signIn("berger@praxis.example")
        let assigned = try await again.send(
            .POST, "/patients/\(patientID.uuidString)/prompts",
            json: [
                "instrumentKey": "phq-9", "opensAt": QuestionnaireAPITests.iso(app.clock.now),
                "closesAt": QuestionnaireAPITests.iso(app.clock.now.addingTimeInterval(86_400)),
            ])
        try #require(assigned.status == .created, "\(assigned.text)")
        let answered = try await app.signIn("ada@example.org").send(
            .POST, "/me/responses",
            json: questionnaires.submission(
                try assigned.decoded(Components.Schemas.Prompt.self).id,
                answers: QuestionnaireAPITests.phqAnswers([1, 1, 1, 1, 1, 1, 1, 1, 1]),
                completedAt: app.clock.now))
        try #require(answered.status == .created, "\(answered.text)")
        let browser = ConsoleBrowser(app)
        _ = try await browser.signIn("berger@praxis.example")
        return (browser, patientID)
    }

    @Test("after a year the chart opens with the alert and the scores, pages its histories and stays under 100 KB")
    func yearOnOnePage() async throws {
        try await withTestApp { app in
            // setup
            let (browser, patientID) = try await yearOfHistory(app)
            let path = "/console/patients/\(patientID.uuidString)"

            // act
            let page = try await browser.get(path)
            let older = try await browser.get(path + "?answersPage=2")
            let last = try await browser.get(path + "?answersPage=999")
            let refused = try await browser.get(path + "?answersPage=0")

            // verify
            #expect(page.status == .ok)
            #expect(page.html.utf8.count < 100_000, "\(page.html.utf8.count) bytes")
            let html = page.html
            func position(_ marker: String) -> String.Index? { html.range(of: marker)?.lowerBound }
            let alert = try #require(position("id=\"open-alerts\""), "the open alert is on the chart")
            let scores = try #require(position("id=\"summary-scores\""))
            let answers = try #require(position("id=\"answers\""))
            let manage = try #require(position("id=\"manage\""))
            #expect(alert < scores && scores < answers && answers < manage, "alert, scores, histories, then managing")
            let alertPart = html[alert..<scores]
            #expect(alertPart.contains("Thoughts that you would be better off dead"), "the alert names the question")
            #expect(
                alertPart.contains("/console/patients/\(patientID.uuidString)/responses/"), "and links to the answer")
            #expect(
                html.components(separatedBy: "class=\"sparkline\"").count - 1 == 2,
                "a sparkline for the PHQ-9 and the mood")
            #expect(html.contains("Last 7 days") && html.contains("Last 28 days"))
            #expect(!html.contains("<dd id=\"last-activity\"></dd>"), "the answers count as activity")
            let pages = (try await ResponseRecord.query(on: app.database).count() + 19) / 20
            #expect(pages > 15)
            #expect(html.contains("Page 1 of \(pages)"), "20 answers a page")
            #expect(html.contains("answersPage=2#answers"))

            #expect(
                older.status == .ok && older.html.contains("Page 2 of \(pages)")
                    && older.html.contains("answersPage=3#answers"))
            #expect(
                last.status == .ok && last.html.contains("Page \(pages) of \(pages)")
                    && !last.html.contains("answersPage=\(pages + 1)"))
            #expect(refused.status == .unprocessableEntity, "a page number below 1 is refused")
        }
    }

    @Test("a chart without answers says so and offers nothing to page")
    func emptyChart() async throws {
        try await withTestApp { app in
            // setup
            let (therapist, _) = try await app.staff("therapist", "berger@praxis.example")
            let (patient, patientID) = try await app.patient(name: "Ada")
            try await app.pair(patient, with: therapist)
            let browser = ConsoleBrowser(app)
            _ = try await browser.signIn("berger@praxis.example")

            // act
            let page = try await browser.get("/console/patients/\(patientID.uuidString)")

            // verify
            #expect(page.status == .ok)
            #expect(!page.html.contains("id=\"open-alerts\""))
            #expect(page.html.contains("No questionnaire with a score has been answered yet."))
            #expect(!page.html.contains("Page 1 of"))
        }
    }
}
