import Fluent
import Foundation
import InterludeCore
import Testing
import VaporTesting

@testable import InterludeServer

/// A rule value of 1e300 once stopped the process each time a submission matched it. Numbers are now refused at
/// the door, and whatever an older installation stored is formatted without trapping.
@Suite("Numbers at the door: refused by field, and stored ones never stop the server")
struct NumberDoorTests {
    static func rule(value: String) -> String {
        """
        {"name": "Huge", "trigger": {"kind": "submitted", "instrumentKey": "phq-9", "condition": {"mode": "all",
        "clauses": [{"subject": "score", "id": "total", "operator": "lessOrEqual", "value": \(value)}]}},
        "action": {"kind": "alert", "priority": "normal", "message": "look"}}
        """
    }

    @Test(
        "a rule value that is not a finite number within ±1e9 is refused naming the field",
        arguments: ["1e300", "-1e10", "1000000000.001"])
    func ruleRefused(value: String) async throws {
        try await withTestApp { app in
            // setup
            let (therapist, _, _) = try await InterventionTests().paired(app)
            let practice = try #require(try await StudyRecord.query(on: app.database).first())
            // act
            let refused = try await therapist.send(
                .POST, "/studies/\(practice.id!.uuidString)/rules", raw: Self.rule(value: value))
            let accepted = try await therapist.send(
                .POST, "/studies/\(practice.id!.uuidString)/rules", raw: Self.rule(value: "1e9"))
            // verify
            #expect(refused.status == .unprocessableEntity, "\(refused.text)")
            #expect(refused.body.problemFields == ["trigger.condition.clauses.0.value"])
            #expect(accepted.status == .created, "\(accepted.text)")
            #expect(try await app.count("study_rules") == 1)
        }
    }

    @Test("a number JSON cannot hold (1e400) makes the body malformed: 400, nothing stored")
    func unreadableNumber() async throws {
        try await withTestApp { app in
            let (therapist, _, _) = try await InterventionTests().paired(app)
            let practice = try #require(try await StudyRecord.query(on: app.database).first())
            let refused = try await therapist.send(
                .POST, "/studies/\(practice.id!.uuidString)/rules", raw: Self.rule(value: "1e400"))
            #expect(refused.status == .badRequest, "\(refused.text)")
            #expect(refused.body["type"].string == "/problems/malformed-request")
            #expect(try await app.count("study_rules") == 0)
        }
    }

    @Test("the console's rule form refuses such a value next to its field")
    func consoleRuleRefused() async throws {
        try await withTestApp { app in
            // setup
            let (console, _, _, practiceID) = try await ConsoleScheduleTests().practice(app)
            let rule: [(String, String)] = [
                ("name", "Huge"), ("trigger", "submitted"), ("instrumentKey", "phq-9"), ("mode", "all"),
                ("subject0", "score"), ("id0", "total"), ("operator0", "lessOrEqual"), ("value0", "1e300"),
                ("action", "alert"), ("priority", "normal"), ("message", "look"), ("intent", "add"),
            ]
            // act
            let page = try await console.post("/console/studies/\(practiceID)/rules", rule)
            // verify
            #expect(page.status == .unprocessableEntity)
            #expect(page.html.contains("value0: "))
            #expect(try await app.count("study_rules") == 0)
        }
    }

    @Test("a rule stored with 1e300 before the door checked it fires, is explained, and the server keeps answering")
    func storedRuleKeepsServing() async throws {
        try await withTestApp { app in
            // setup: the rule as an older installation could have stored it
            let (therapist, patient, patientID) = try await InterventionTests().paired(app)
            let practice = try #require(try await StudyRecord.query(on: app.database).first())
            try await RuleRecord(
                studyID: practice.requireID(), createdBy: nil, definition: Self.rule(value: "1e300"), now: app.clock.now
            ).create(on: app.database)
            // act
            _ = try await InterventionTests().answer(
                app, therapist: therapist, patient: patient, patientID: patientID,
                answers: QuestionnaireAPITests.phqAnswers([1, 1, 1, 1, 1, 1, 1, 1, 0]))
            let console = ConsoleBrowser(app)
            _ = try await console.signIn("berger@praxis.example")
            let rules = try await console.get("/console/studies/\(practice.id!.uuidString)/rules")
            let alerts = try await therapist.send(.GET, "/alerts")
            // verify
            #expect(rules.status == .ok)
            #expect(rules.html.contains("1e+300"))
            #expect(alerts.status == .ok)
            #expect(alerts.body.array.count == 1)
            #expect(try await app.count("rule_firings") == 1)
        }
    }

    @Test(
        "an answer outside ±1e9 is refused naming the item, an ordinary one is taken",
        arguments: ["1e300", "1e400", "-1e12"])
    func answerRefused(value: String) async throws {
        try await withTestApp { app in
            // setup
            let (therapist, patient, patientID) = try await InterventionTests().paired(app)
            let assigned = try await therapist.send(
                .POST, "/patients/\(patientID.uuidString)/prompts",
                json: [
                    "instrumentKey": "mood-vas", "opensAt": QuestionnaireAPITests.iso(app.clock.now),
                    "closesAt": QuestionnaireAPITests.iso(app.clock.now.addingTimeInterval(3600)),
                ])
            let promptID = try #require(assigned.body["id"].string)
            func submit(_ number: String) async throws -> APIClient.Reply {
                try await patient.send(
                    .POST, "/me/responses",
                    raw: """
                        {"id": "\(UUID().uuidString)", "promptId": "\(promptID)", "instrumentKey": "mood-vas", "version": 1,
                        "answers": {"mood": \(number)}, "completedAt": "\(ISO8601DateFormatter().string(from: app.clock.now))"}
                        """)
            }
            // act
            let refused = try await submit(value)
            let taken = try await submit("40")
            // verify
            #expect(refused.status == .unprocessableEntity, "\(refused.text)")
            #expect(refused.body.problemFields == ["answers.mood"])
            #expect(taken.status == .created, "\(taken.text)")
        }
    }

    @Test("a chart of extreme stored scores renders")
    func extremeChart() {
        let display = DateDisplay(language: .en, timeZone: .gmt)
        for value in NumberSafetyValues.extremes {
            let chart = ScoreChart(
                title: "t",
                points: [.init(date: .t0, value: value), .init(date: .t0.addingTimeInterval(86_400), value: 3)],
                bands: [], range: 0...10, resolution: 1, display: display, language: .en, id: "c")
            #expect(chart.svg.hasPrefix("<svg"))
        }
    }
}

enum NumberSafetyValues {
    static let extremes: [Double] = [
        1e308, -1e308, .infinity, -.infinity, .nan, -0.0, 9_223_372_036_854_775_808, 1e300,
    ]
}
