import Fluent
import Foundation
import InterludeCore
import Testing
import VaporTesting

@testable import InterludeServer

@Suite("Console: between sessions, alerts, rules, templates and messages")
struct ConsoleInterventionTests {
    /// Assigns a questionnaire through the patient page, open from now for a day; returns the prompt's id.
    func assign(_ app: TestContext, patientID: UUID, instrument: String, console: ConsoleBrowser) async throws -> String
    {
        let vienna = TimeZone(identifier: "Europe/Vienna")!
        let opens = LocalDateTime(app.clock.now.addingTimeInterval(-60), in: vienna)
        let closes = LocalDateTime(app.clock.now.addingTimeInterval(86_400), in: vienna)
        let reply = try await console.post(
            "/console/patients/\(patientID.uuidString)/prompts",
            [("instrumentKey", instrument), ("opensAt", opens.description), ("closesAt", closes.description)])
        try #require(reply.status == .created, "\(reply.html.prefix(300))")
        let prompt = try #require(
            try await PromptRecord.query(on: app.database).filter(\.$instrumentKey == instrument)
                .sort(\.$createdAt, .descending).first())
        return prompt.id!.uuidString
    }

    /// Answers the Intersession-Daily once per pair, an hour apart: whether the patient thought of therapy and how
    /// they felt.
    func answerDailies(
        _ app: TestContext, _ pairs: [(Bool, String)], patient: APIClient, patientID: UUID, console: ConsoleBrowser
    )
        async throws
    {
        for (thought, feeling) in pairs {
            let assigned = try await assign(
                app, patientID: patientID, instrument: "intersession-daily", console: console)
            let answers: JSONValue = thought ? ["thought": true, "feeling": .string(feeling)] : ["thought": false]
            let reply = try await patient.send(
                .POST, "/me/responses",
                json: [
                    "id": .string(UUID().uuidString), "promptId": .string(assigned),
                    "instrumentKey": "intersession-daily",
                    "version": 1, "answers": answers, "completedAt": QuestionnaireAPITests.iso(app.clock.now),
                ])
            try #require(reply.status == .created, "\(reply.text)")
            app.clock.advance(by: 3600)
        }
    }

    /// Answers a PHQ-9 with item 9 above "not at all", which raises a high-priority alert; returns the alert.
    func raiseAlert(_ app: TestContext, patient: APIClient, patientID: UUID, console: ConsoleBrowser) async throws
        -> AlertRecord
    {
        let phq = try await assign(app, patientID: patientID, instrument: "phq-9", console: console)
        _ = try await patient.send(
            .POST, "/me/responses",
            json: [
                "id": .string(UUID().uuidString), "promptId": .string(phq), "instrumentKey": "phq-9", "version": 1,
                "answers": QuestionnaireAPITests.phqAnswers([0, 0, 0, 0, 0, 0, 0, 0, 1]),
                "completedAt": QuestionnaireAPITests.iso(app.clock.now),
            ])
        return try #require(try await AlertRecord.query(on: app.database).first())
    }

    @Test("the patient page leads to the timeline, which says when no Daily was answered")
    func emptyTimeline() async throws {
        try await withTestApp { app in
            // setup
            let (console, _, patientID, _) = try await ConsoleScheduleTests().practice(app)
            let base = "/console/patients/\(patientID.uuidString)"
            // act
            let patientPage = try await console.get(base)
            let timeline = try await console.get("\(base)/intersession")
            // verify
            #expect(patientPage.html.contains("\(base)/intersession"))
            #expect(timeline.status == .ok)
            #expect(timeline.html.contains("No Intersession-Daily answered"))
        }
    }

    @Test("a blank intervention is refused beside its field; a sent one shows escaped and as sent")
    func sendIntervention() async throws {
        try await withTestApp { app in
            // setup
            let (console, _, patientID, _) = try await ConsoleScheduleTests().practice(app)
            let base = "/console/patients/\(patientID.uuidString)"
            // act
            let refused = try await console.post("\(base)/interventions", [("kind", "task"), ("text", "  ")])
            let sent = try await console.post(
                "\(base)/interventions", [("kind", "task"), ("text", "Walk <10> minutes")])
            let page = try await console.get("\(base)/intersession?sent=1")
            // verify
            #expect(refused.status == .unprocessableEntity)
            #expect(refused.html.contains("aria-invalid=\"true\" aria-describedby=\"text-error\""))
            #expect(sent.status == .seeOther)
            #expect(page.html.contains("Walk &lt;10&gt; minutes"))
            #expect(page.html.contains("data-state=\"sent\""))
            #expect(try await app.count("interventions") == 1)
        }
    }

    @Test("a template of the practice's rules page is sent from the timeline")
    func sendTemplate() async throws {
        try await withTestApp { app in
            // setup
            let (console, patient, patientID, practiceID) = try await ConsoleScheduleTests().practice(app)
            _ = try await console.post(
                "/console/studies/\(practiceID)/templates",
                [("kind", "commendation"), ("text", "Well done this week!")])
            let template = try #require(try await InterventionTemplateRecord.query(on: app.database).first())
            // act
            let sent = try await console.post(
                "/console/patients/\(patientID.uuidString)/interventions/template",
                [("templateID", try template.requireID().uuidString)])
            // verify
            #expect(sent.status == .seeOther)
            let received = try await patient.send(.GET, "/me/interventions").decoded(
                [Components.Schemas.Intervention].self)
            #expect(received.map(\.text) == ["Well done this week!"])
        }
    }

    @Test(
        "a template written in both languages reaches a German patient in German; a German text too long is refused at its field"
    )
    func templateInGerman() async throws {
        try await withTestApp { app in
            // setup
            let (console, patient, patientID, practiceID) = try await ConsoleScheduleTests().practice(app)
            try #require(try await patient.send(.PATCH, "/me", json: ["locale": "de"]).status == .ok)
            let path = "/console/studies/\(practiceID)/templates"

            // act
            let refused = try await console.post(
                path,
                [("kind", "commendation"), ("text", "Well done!"), ("textDe", String(repeating: "g", count: 2001))])
            _ = try await console.post(
                path, [("kind", "commendation"), ("text", "Well done!"), ("textDe", "Gut gemacht!")])
            let template = try #require(try await InterventionTemplateRecord.query(on: app.database).first())
            let rules = try await console.get("/console/studies/\(practiceID)/rules")
            let sent = try await console.post(
                "/console/patients/\(patientID.uuidString)/interventions/template",
                [("templateID", try template.requireID().uuidString)])

            // verify
            #expect(refused.status == .unprocessableEntity)
            #expect(refused.html.contains("id=\"template-textDe-error\""))
            #expect(try await app.count("intervention_templates") == 1)
            #expect(rules.html.contains("Well done!<br><span lang=\"de\">Gut gemacht!</span>"))
            #expect(sent.status == .seeOther)
            let received = try await patient.send(.GET, "/me/interventions").decoded(
                [Components.Schemas.Intervention].self)
            #expect(received.map(\.text) == ["Gut gemacht!"])
        }
    }

    @Test("Dailies over two days give a chart and a table of answered, thought and mean feeling; reading is audited")
    func timeline() async throws {
        try await withTestApp { app in
            // setup
            let (console, patient, patientID, _) = try await ConsoleScheduleTests().practice(app)
            try await answerDailies(
                app, [(true, "4"), (false, ""), (true, "2")], patient: patient, patientID: patientID, console: console)
            // act
            let page = try await console.get("/console/patients/\(patientID.uuidString)/intersession")
            // verify
            #expect(page.html.contains("<svg"))
            #expect(page.html.contains("chart-feeling"))
            #expect(page.html.contains("<td>3</td><td>2</td><td>3</td>"), "answered, thought, mean feeling")
            #expect(try await app.count("audit_events WHERE action = 'timeline.read'") >= 1)
        }
    }

    @Test("a crisis answer shows as a badged high-priority alert")
    func alertBadge() async throws {
        try await withTestApp { app in
            // setup
            let (console, patient, patientID, _) = try await ConsoleScheduleTests().practice(app)
            _ = try await raiseAlert(app, patient: patient, patientID: patientID, console: console)
            // act
            let patients = try await console.get("/console/patients")
            let inbox = try await console.get("/console/alerts")
            // verify
            #expect(patients.html.contains("data-open-alerts=\"1\""))
            #expect(inbox.html.contains("id=\"alert-badge\">1<"))
            #expect(inbox.html.contains("High priority"))
        }
    }

    @Test(
        "a high-priority alert comes first and is bannered on every page until acknowledged; it names the question, the answer and the patient, and links to the answers"
    )
    func riskFirst() async throws {
        try await withTestApp { app in
            // setup: a normal alert, then an hour later the crisis answer, then another normal alert
            let (console, patient, patientID, practiceID) = try await ConsoleScheduleTests().practice(app)
            let alerts = AlertService(database: app.database, services: app.app.interlude)
            let older = try #require(
                try await alerts.raise(
                    about: patientID, studyID: practiceID, priority: .normal, reason: "three missed", firingID: nil))
            let withoutBanner = try await console.get("/console/patients")
            app.clock.advance(by: 3_600)
            _ = try await raiseAlert(app, patient: patient, patientID: patientID, console: console)
            let crisis = try #require(
                try await AlertRecord.query(on: app.database).filter(\.$priority == .high).first())
            app.clock.advance(by: 600)
            let newer = try #require(
                try await alerts.raise(
                    about: patientID, studyID: practiceID, priority: .normal, reason: "later", firingID: nil))
            let response = try #require(try await ResponseRecord.query(on: app.database).first())
            // act
            let inbox = try await console.get("/console/alerts")
            let pages = [
                try await console.get("/console/patients"),
                try await console.get(ConsoleScheduleTests().plansPath(practiceID)),
            ]
            _ = try await console.post(
                "/console/alerts/\(try crisis.requireID().uuidString)/acknowledgement", [("note", "Called; safe.")])
            let afterwards = try await console.get("/console/patients")
            // verify
            let order = [crisis, older, newer].map { alert in
                inbox.html.range(of: "data-alert=\"\(alert.id!.uuidString)\"")?.lowerBound
            }
            #expect(
                order.allSatisfy { $0 != nil } && order[0]! < order[1]! && order[1]! < order[2]!,
                "high first, then oldest first")
            #expect(
                inbox.html.contains(
                    "Answered “Several days” to “Thoughts that you would be better off dead or of hurting yourself in some way”"
                ))
            #expect(
                inbox.html.contains(
                    "/console/patients/\(patientID.uuidString)/responses/\(try response.requireID().uuidString)"))
            #expect(inbox.html.contains("Ada · "), "the patient's name beside the code")
            #expect(!inbox.html.contains("phq9_9"))
            #expect(
                pages.allSatisfy {
                    $0.html.contains("id=\"urgent-alerts\"")
                        && $0.html.contains("A high-priority alert is waiting for you.")
                })
            #expect(!withoutBanner.html.contains("id=\"urgent-alerts\""), "a normal alert puts up no banner")
            #expect(!afterwards.html.contains("id=\"urgent-alerts\""), "acknowledged, the banner goes")
        }
    }

    @Test("acknowledging an alert needs a note, then clears the badge and shows the note")
    func acknowledgeAlert() async throws {
        try await withTestApp { app in
            // setup
            let (console, patient, patientID, _) = try await ConsoleScheduleTests().practice(app)
            let alert = try await raiseAlert(app, patient: patient, patientID: patientID, console: console)
            let path = "/console/alerts/\(try alert.requireID().uuidString)/acknowledgement"
            // act
            let noNote = try await console.post(path, [("note", "")])
            let done = try await console.post(path, [("note", "Called; safe.")])
            let after = try await console.get("/console/alerts?acknowledged=1")
            // verify
            #expect(noNote.status == .unprocessableEntity)
            #expect(done.status == .seeOther)
            #expect(!after.html.contains("id=\"alert-badge\""))
            #expect(after.html.contains("Called; safe."))
            #expect(!(try await console.get("/console/patients").html.contains("data-open-alerts")))
        }
    }

    /// What another therapist tries on someone else's patient; each is not found.
    static let otherTherapistRequests: [(method: String, path: String, form: [(String, String)])] = [
        ("GET", "intersession", []),
        ("POST", "interventions", [("kind", "task"), ("text", "x")]),
        ("POST", "acknowledgement", [("note", "x")]),
    ]

    @Test(
        "another therapist neither reads the timeline, sends, nor acknowledges",
        arguments: 0..<otherTherapistRequests.count)
    func otherTherapist(_ index: Int) async throws {
        try await withTestApp { app in
            // setup
            let (console, patient, patientID, _) = try await ConsoleScheduleTests().practice(app)
            let alert = try await raiseAlert(app, patient: patient, patientID: patientID, console: console)
            _ = try await app.staff("therapist", "other@praxis.example")
            let other = ConsoleBrowser(app)
            _ = try await other.signIn("other@praxis.example")
            _ = try await other.get("/console/patients")
            let (method, target, form) = Self.otherTherapistRequests[index]
            let path =
                target == "acknowledgement"
                ? "/console/alerts/\(try alert.requireID().uuidString)/acknowledgement"
                : "/console/patients/\(patientID.uuidString)/\(target)"
            // act
            let reply = method == "GET" ? try await other.get(path) : try await other.post(path, form)
            // verify
            #expect(reply.status == .notFound)
            #expect(try await app.count("interventions") == 0)
            #expect(try await app.count("alerts WHERE acknowledged_at IS NULL") == 1)
        }
    }

    /// A rule as the form sends it: an alert when a PHQ-9's total reaches 15.
    static let severeRule: [(String, String)] = [
        ("name", "Severe"), ("trigger", "submitted"), ("instrumentKey", "phq-9"), ("mode", "all"),
        ("subject0", "score"), ("id0", "total"), ("operator0", "greaterOrEqual"), ("value0", "15"),
        ("action", "alert"), ("priority", "high"), ("message", "Severe depression"),
    ]

    @Test("a therapist's rules are their practice's")
    func practiceRules() async throws {
        try await withTestApp { app in
            // setup
            let (console, _, _, practiceID) = try await ConsoleScheduleTests().practice(app)
            // act
            let reply = try await console.get("/console/rules")
            // verify
            #expect(reply.location == "/console/studies/\(practiceID)/rules")
        }
    }

    @Test("a rule with a bad clause is refused beside the field and nothing is stored")
    func refusedRule() async throws {
        try await withTestApp { app in
            // setup
            let (console, _, _, practiceID) = try await ConsoleScheduleTests().practice(app)
            let form = Self.severeRule.map { $0.0 == "id0" ? ("id0", "nope") : $0 } + [("intent", "add")]
            // act
            let bad = try await console.post("/console/studies/\(practiceID)/rules", form)
            // verify
            #expect(bad.status == .unprocessableEntity)
            #expect(bad.html.contains("id0: "))
            #expect(try await app.count("study_rules") == 0)
        }
    }

    @Test("a dry run on a participant's past shows that the rule would fire, and stores nothing")
    func dryRun() async throws {
        try await withTestApp { app in
            // setup
            let (console, patient, patientID, practiceID) = try await ConsoleScheduleTests().practice(app)
            let phq = try await assign(app, patientID: patientID, instrument: "phq-9", console: console)
            _ = try await patient.send(
                .POST, "/me/responses",
                json: [
                    "id": .string(UUID().uuidString), "promptId": .string(phq), "instrumentKey": "phq-9", "version": 1,
                    "answers": QuestionnaireAPITests.phqAnswers([3, 3, 3, 3, 3, 0, 0, 0, 0]),
                    "completedAt": QuestionnaireAPITests.iso(app.clock.now),
                ])
            // act
            let dry = try await console.post(
                "/console/studies/\(practiceID)/rules",
                Self.severeRule + [("intent", "dry-run"), ("patientID", patientID.uuidString)])
            let listed = try await console.get("/console/studies/\(practiceID)/rules")
            // verify
            #expect(dry.status == .ok)
            #expect(dry.html.contains("data-fires=\"true\""))
            #expect(dry.html.contains("score total = 15 (≥ 15)"))
            #expect(try await app.count("study_rules") == 0)
            #expect(listed.status == .ok)
            let listing = try await AuditEventRecord.query(on: app.database)
                .filter(\.$action == AuditAction.participantsRead.rawValue).filter(\.$subjectID == patientID).count()
            #expect(listing >= 1, "listing whom a rule may be tried on is a read of who takes part")
        }
    }

    @Test("a saved rule is listed in words")
    func savedRule() async throws {
        try await withTestApp { app in
            // setup
            let (console, _, _, practiceID) = try await ConsoleScheduleTests().practice(app)
            let path = "/console/studies/\(practiceID)/rules"
            // act
            let saved = try await console.post(path, Self.severeRule + [("intent", "add")])
            let listed = try await console.get("\(path)?added=1")
            // verify
            #expect(saved.location == "\(path)?added=1")
            #expect(
                listed.html.contains(
                    "When Patient Health Questionnaire (PHQ-9) is submitted (score “Depression severity” ≥ 15)"))
            #expect(try await app.count("study_rules") == 1)
            // The form offers the chosen questionnaire's questions by their text, its scores and bands by name.
            let refused = try await console.post(path, Self.severeRule.filter { $0.0 != "name" } + [("intent", "add")])
            #expect(refused.status == .unprocessableEntity)
            #expect(
                refused.html.contains(
                    #"<option value="phq9_9">Thoughts that you would be better off dead or of hurting yourself in some way</option>"#
                ))
            #expect(refused.html.contains(#"<option value="total" selected>Depression severity</option>"#))
            #expect(refused.html.contains(#"<option value="severe">"#))
        }
    }

    /// Fills the practice's message pool and plans three a day between 09:00 and 20:00.
    func planMessages(_ console: ConsoleBrowser, practiceID: UUID) async throws -> ConsoleBrowser.Page {
        _ = try await console.post(
            "/console/studies/\(practiceID)/messages", [("text", "Notice one thing you value today.")])
        _ = try await console.post(
            "/console/studies/\(practiceID)/messages", [("text", "Breathe, then act on what matters.")])
        return try await console.post(
            "/console/studies/\(practiceID)/message-plan",
            [("perDay", "3"), ("windowStart", "09:00"), ("windowEnd", "20:00"), ("intent", "save")])
    }

    @Test("a message plan whose window ends before it starts is refused")
    func refusedMessagePlan() async throws {
        try await withTestApp { app in
            // setup
            let (console, _, _, practiceID) = try await ConsoleScheduleTests().practice(app)
            // act
            let wrong = try await console.post(
                "/console/studies/\(practiceID)/message-plan",
                [("perDay", "3"), ("windowStart", "20:00"), ("windowEnd", "09:00"), ("intent", "save")])
            // verify
            #expect(wrong.status == .unprocessableEntity)
            #expect(try await app.count("message_plans") == 0)
        }
    }

    @Test("planned messages come from the pool inside the window, once, and reach the patient only when due")
    func plannedMessages() async throws {
        try await withTestApp { app in
            // setup
            let (console, patient, _, practiceID) = try await ConsoleScheduleTests().practice(app)
            _ = try await planMessages(console, practiceID: practiceID)
            let planner = MessagePlanner(database: app.database, services: app.app.interlude)
            // act
            let created = try await planner.run(now: app.clock.now)
            let again = try await planner.run(now: app.clock.now)
            let early = try await patient.send(.GET, "/me/interventions").decoded(
                [Components.Schemas.Intervention].self)
            app.clock.advance(by: 2 * 86_400)
            let later = try await patient.send(.GET, "/me/interventions").decoded(
                [Components.Schemas.Intervention].self)
            // verify
            #expect(created >= 3 && created <= 6, "today's remaining moments and tomorrow's three")
            #expect(again == 0)
            let planned = try await InterventionRecord.query(on: app.database).filter(
                \.$kind == InterventionKind.message
            ).all()
            let vienna = TimeZone(identifier: "Europe/Vienna")!
            #expect(
                planned.allSatisfy {
                    let time = LocalDateTime($0.deliverAt, in: vienna).time
                    return time >= LocalTime("09:00")! && time <= LocalTime("20:00")!
                        && $0.deliverAt > app.clock.now.addingTimeInterval(-2 * 86_400)
                })
            #expect(try await app.count("notifications WHERE category = 'messages'") == planned.count)
            #expect(early.allSatisfy { $0.kind != .message })
            let messages = later.filter { $0.kind == .message }
            #expect(messages.count == planned.count)
            #expect(
                messages.allSatisfy {
                    ["Notice one thing you value today.", "Breathe, then act on what matters."].contains($0.text)
                })
        }
    }

    @Test("removing the message plan deletes it")
    func removeMessagePlan() async throws {
        try await withTestApp { app in
            // setup
            let (console, _, _, practiceID) = try await ConsoleScheduleTests().practice(app)
            _ = try await planMessages(console, practiceID: practiceID)
            // act
            let stopped = try await console.post(
                "/console/studies/\(practiceID)/message-plan",
                [("perDay", "3"), ("windowStart", "09:00"), ("windowEnd", "20:00"), ("intent", "remove")])
            // verify
            #expect(stopped.status == .seeOther, "\(stopped.html.prefix(500))")
            #expect(try await app.count("message_plans") == 0)
        }
    }

    @Test("a researcher outside the practice reaches neither its rules nor its messages", arguments: [false, true])
    func researcherOutsidePractice(_ posting: Bool) async throws {
        try await withTestApp { app in
            // setup
            let (_, _, _, practiceID) = try await ConsoleScheduleTests().practice(app)
            _ = try await app.staff("researcher", "lab@uni.example")
            let lab = ConsoleBrowser(app)
            _ = try await lab.signIn("lab@uni.example")
            _ = try await lab.get("/console/studies")
            // act
            let reply =
                posting
                ? try await lab.post("/console/studies/\(practiceID)/messages", [("text", "x")])
                : try await lab.get("/console/studies/\(practiceID)/rules")
            // verify
            #expect(reply.status == .notFound)
            #expect(try await app.count("study_messages") == 0)
        }
    }
}
