import Fluent
import Foundation
import InterludeCore
import InterludeKit
import Testing
import VaporTesting

@testable import InterludeServer

@Suite("Interventions, rules and alerts")
struct InterventionTests {
    static let iso = QuestionnaireAPITests.iso

    /// A therapist with a paired patient.
    func paired(_ app: TestContext) async throws -> (therapist: APIClient, patient: APIClient, patientID: UUID) {
        let (therapist, _) = try await app.staff("therapist", "berger@praxis.example")
        let (patient, patientID) = try await app.patient()
        try await app.pair(patient, with: therapist)
        return (therapist, patient, patientID)
    }

    /// Assigns a questionnaire open for a week and answers it.
    func answer(
        _ app: TestContext, therapist: APIClient, patient: APIClient, patientID: UUID, instrument: String = "phq-9",
        answers: JSONValue
    ) async throws -> JSON {
        let assigned = try await therapist.send(
            .POST, "/patients/\(patientID.uuidString)/prompts",
            json: [
                "instrumentKey": .string(instrument), "opensAt": Self.iso(app.clock.now),
                "closesAt": Self.iso(app.clock.now.addingTimeInterval(7 * 86_400)),
            ])
        try #require(assigned.status == .created, "\(assigned.text)")
        app.clock.advance(by: 300)
        let submitted = try await patient.send(
            .POST, "/me/responses",
            json: [
                "id": .string(UUID().uuidString), "promptId": .string(assigned.body["id"].string ?? ""),
                "instrumentKey": .string(instrument), "version": 1, "answers": answers,
                "startedAt": Self.iso(app.clock.now.addingTimeInterval(-120)), "completedAt": Self.iso(app.clock.now),
            ])
        try #require(submitted.status == .created, "\(submitted.text)")
        return submitted.body
    }

    func dispatch(_ app: TestContext) async throws {
        _ = try await NotificationDispatcher(
            database: app.database, services: app.app.interlude, channels: app.app.notificationChannels
        ).dispatch(now: app.clock.now)
    }

    typealias Intervention = Components.Schemas.Intervention
    typealias Alert = Components.Schemas.Alert

    static let walk: JSONValue = ["kind": "task", "text": "  Take a ten-minute walk today.  "]

    /// Sends the walk task with `id` and answers the reply.
    func sendWalk(_ therapist: APIClient, to patientID: UUID, id: UUID = UUID()) async throws -> APIClient.Reply {
        try await therapist.send(
            .POST, "/patients/\(patientID.uuidString)/interventions",
            json: Self.walk.merging(["id": .string(id.uuidString)]))
    }

    // MARK: Sending interventions

    @Test("a therapist's task is stored trimmed, as sent by the therapist, its text sealed")
    func sendTask() async throws {
        try await withTestApp { app in
            // setup
            let (therapist, _, patientID) = try await paired(app)
            let id = UUID()

            // act
            let sent = try await sendWalk(therapist, to: patientID, id: id)

            // verify
            #expect(sent.status == .created, "\(sent.text)")
            let intervention = try sent.decoded(Intervention.self)
            #expect(intervention.text == "Take a ten-minute walk today.")
            #expect(intervention.state == .sent && intervention.origin == .therapist && intervention.kind == .task)
            let stored = try #require(try await InterventionRecord.find(id, on: app.database))
            #expect(!stored.text.contains("walk"))
        }
    }

    @Test("sending the same intervention again answers the stored one and stores nothing new")
    func resend() async throws {
        try await withTestApp { app in
            // setup
            let (therapist, _, patientID) = try await paired(app)
            let id = UUID()
            _ = try await sendWalk(therapist, to: patientID, id: id)

            // act
            let retried = try await sendWalk(therapist, to: patientID, id: id)

            // verify
            #expect(retried.status == .created)
            #expect(try retried.decoded(Intervention.self).id == id.uuidString.lowercased())
            #expect(try await app.count("interventions") == 1)
        }
    }

    enum RefusedSending: String, CaseIterable, Sendable {
        case anotherTherapistSends, anotherTherapistLists, anotherTherapistTakesTheID, thePatientSends, anEmptyText,
            aMessageByHand

        var status: HTTPStatus {
            switch self {
            case .anotherTherapistSends, .anotherTherapistLists, .anotherTherapistTakesTheID: .notFound
            case .thePatientSends: .forbidden
            case .anEmptyText, .aMessageByHand: .unprocessableEntity
            }
        }
    }

    @Test(
        "interventions are refused to other therapists and to patients, and checked like any input",
        arguments: RefusedSending.allCases)
    func refusedSending(_ refused: RefusedSending) async throws {
        try await withTestApp { app in
            // setup: one task already sent
            let (therapist, patient, patientID) = try await paired(app)
            let id = UUID()
            _ = try await sendWalk(therapist, to: patientID, id: id)
            let (stranger, _) = try await app.staff("therapist", "other@praxis.example")
            let path = "/patients/\(patientID.uuidString)/interventions"

            // act
            let reply: APIClient.Reply
            switch refused {
            case .anotherTherapistSends:
                reply = try await stranger.send(.POST, path, json: ["kind": "task", "text": "x"])
            case .anotherTherapistLists: reply = try await stranger.send(.GET, path)
            case .anotherTherapistTakesTheID: reply = try await sendWalk(stranger, to: patientID, id: id)
            case .thePatientSends: reply = try await patient.send(.POST, path, json: ["kind": "task", "text": "x"])
            case .anEmptyText: reply = try await therapist.send(.POST, path, json: ["kind": "question", "text": " "])
            case .aMessageByHand: reply = try await therapist.send(.POST, path, json: ["kind": "message", "text": "x"])
            }

            // verify
            #expect(reply.status == refused.status, "\(reply.text)")
            if refused == .anEmptyText { #expect(reply.body.problemFields == ["text"]) }
            #expect(!reply.text.contains("walk"))
            #expect(try await app.count("interventions") == 1)
        }
    }

    @Test("the patient is notified of a new intervention by a notification that names no content")
    func notified() async throws {
        try await withTestApp { app in
            // setup
            let (therapist, _, patientID) = try await paired(app)
            let id = UUID()
            let earlier = app.mailer.sent.count

            // act
            _ = try await sendWalk(therapist, to: patientID, id: id)
            try await dispatch(app)

            // verify
            let queued = try await NotificationRecord.query(on: app.database).filter(\.$category == .interventions)
                .all()
            #expect(queued.map(\.path) == ["/app/interventions/\(id.uuidString.lowercased())"])
            #expect(queued.allSatisfy { !$0.body.contains("walk") && !$0.title.contains("walk") })
            let mail = app.mailer.sent.dropFirst(earlier).filter { $0.to == "patient@example.org" }
            #expect(mail.count == 1)
            #expect(mail.allSatisfy { !$0.text.contains("walk") })
        }
    }

    @Test("the patient marks an intervention seen; marking it again keeps the first time")
    func seen() async throws {
        try await withTestApp { app in
            // setup
            let (therapist, patient, patientID) = try await paired(app)
            let id = UUID()
            _ = try await sendWalk(therapist, to: patientID, id: id)
            let first = try await patient.send(.POST, "/me/interventions/\(id.uuidString)/seen").decoded(
                Intervention.self)
            app.clock.advance(by: 60)

            // act
            let again = try await patient.send(.POST, "/me/interventions/\(id.uuidString)/seen").decoded(
                Intervention.self)

            // verify
            #expect(first.state == .seen)
            #expect(again.seenAt == first.seenAt)
        }
    }

    @Test("the patient completes an intervention once; completing it again is a conflict")
    func completion() async throws {
        try await withTestApp { app in
            // setup
            let (therapist, patient, patientID) = try await paired(app)
            let id = UUID()
            _ = try await sendWalk(therapist, to: patientID, id: id)

            // act
            let done = try await patient.send(.POST, "/me/interventions/\(id.uuidString)/completion")
            let twice = try await patient.send(.POST, "/me/interventions/\(id.uuidString)/completion")

            // verify
            #expect(try done.decoded(Intervention.self).state == .completed)
            #expect(twice.status == .conflict)
            #expect(twice.body["type"].string == "/problems/intervention-completed")
        }
    }

    @Test("another patient neither sees an intervention nor marks it")
    func otherPatient() async throws {
        try await withTestApp { app in
            // setup
            let (therapist, _, patientID) = try await paired(app)
            let id = UUID()
            _ = try await sendWalk(therapist, to: patientID, id: id)
            let (other, _) = try await app.patient("other@example.org")

            // act
            let marked = try await other.send(.POST, "/me/interventions/\(id.uuidString)/seen")
            let inbox = try await other.send(.GET, "/me/interventions").decoded([Intervention].self)

            // verify
            #expect(marked.status == .notFound)
            #expect(inbox.isEmpty)
            #expect(try await InterventionRecord.find(id, on: app.database)?.seenAt == nil)
        }
    }

    @Test("the therapist follows what the patient did, the read is audited, and the patient's sync carries the state")
    func followed() async throws {
        try await withTestApp { app in
            // setup
            let (therapist, patient, patientID) = try await paired(app)
            let id = UUID()
            _ = try await sendWalk(therapist, to: patientID, id: id)
            _ = try await patient.send(.POST, "/me/interventions/\(id.uuidString)/completion")

            // act
            let followed = try await therapist.send(.GET, "/patients/\(patientID.uuidString)/interventions").decoded(
                [Intervention].self)
            let synced = try await patient.send(.GET, "/sync")

            // verify
            #expect(followed.map(\.state) == [.completed])
            #expect(followed.first?.completedAt != nil)
            #expect(try await app.count("audit_events WHERE action = 'interventions.read'") == 1)
            #expect(synced.body["interventions"].array.map { $0["state"].string } == ["completed"])
        }
    }

    // MARK: Alerts

    /// A paired patient whose PHQ-9 answered item 9 with 2, and the therapist's alert about it.
    func riskAnswered(_ app: TestContext) async throws -> (
        therapist: APIClient, patient: APIClient, patientID: UUID, alert: Alert
    ) {
        let (therapist, patient, patientID) = try await paired(app)
        _ = try await answer(
            app, therapist: therapist, patient: patient, patientID: patientID,
            answers: QuestionnaireAPITests.phqAnswers([1, 1, 0, 0, 0, 0, 0, 0, 2]))
        let alerts = try await therapist.send(.GET, "/alerts").decoded([Alert].self)
        return (therapist, patient, patientID, try #require(alerts.first))
    }

    @Test("a PHQ-9 with item 9 at 0 raises no alert")
    func noRiskNoAlert() async throws {
        try await withTestApp { app in
            // setup
            let (therapist, patient, patientID) = try await paired(app)

            // act
            _ = try await answer(
                app, therapist: therapist, patient: patient, patientID: patientID,
                answers: QuestionnaireAPITests.phqAnswers([1, 1, 0, 0, 0, 0, 0, 0, 0]))

            // verify
            #expect(try await therapist.send(.GET, "/alerts").decoded([Alert].self).isEmpty)
            #expect(try await app.count("rule_firings") == 0)
        }
    }

    @Test("PHQ-9 item 9 above 0 raises exactly one high-priority alert, with its reason, for the therapist")
    func riskAlert() async throws {
        try await withTestApp { app in
            // setup / act
            let (therapist, _, patientID, alert) = try await riskAnswered(app)

            // verify
            #expect(alert.priority == .high)
            #expect(alert.patientId == patientID.uuidString.lowercased())
            #expect(alert.reason.contains("item phq9_9 = 2"))
            #expect(alert.acknowledgedAt == nil)
            #expect(try await therapist.send(.GET, "/alerts").decoded([Alert].self).count == 1)
            #expect(try await app.count("rule_firings") == 1)
        }
    }

    @Test("the therapist is told by one mail that names no item, but the patient's code, and links to the alert")
    func riskAlertMail() async throws {
        try await withTestApp { app in
            // setup
            let (_, _, patientID, alert) = try await riskAnswered(app)
            let code = try #require(
                try await PatientProfileRecord.query(on: app.database).filter(\.$user.$id == patientID).first()
            ).pseudonym

            // act
            try await dispatch(app)

            // verify
            let mail = app.mailer.sent.filter { $0.to == "berger@praxis.example" }
            #expect(mail.count == 1)
            #expect(mail.allSatisfy { !$0.text.contains("phq9") })
            #expect(mail.first?.text.contains("About \(code).") == true)
            #expect(
                mail.first?.text.contains("/console/alerts#alert-\(alert.id.uppercased())") == true,
                "\(mail.first?.text ?? "")")
        }
    }

    enum RefusedAcknowledgement: String, CaseIterable, Sendable {
        case anotherTherapistLists, anotherTherapistAcknowledges, thePatientLists, anEmptyNote
    }

    @Test(
        "alerts are refused to other therapists and patients, and an acknowledgement needs a note",
        arguments: RefusedAcknowledgement.allCases)
    func refusedAcknowledgement(_ refused: RefusedAcknowledgement) async throws {
        try await withTestApp { app in
            // setup
            let (therapist, patient, _, alert) = try await riskAnswered(app)
            let (stranger, _) = try await app.staff("therapist", "other@praxis.example")

            // act
            let reply: APIClient.Reply
            switch refused {
            case .anotherTherapistLists: reply = try await stranger.send(.GET, "/alerts")
            case .anotherTherapistAcknowledges:
                reply = try await stranger.send(.POST, "/alerts/\(alert.id)/acknowledgement", json: ["note": "x"])
            case .thePatientLists: reply = try await patient.send(.GET, "/alerts")
            case .anEmptyNote:
                reply = try await therapist.send(.POST, "/alerts/\(alert.id)/acknowledgement", json: ["note": "  "])
            }

            // verify
            switch refused {
            case .anotherTherapistLists: #expect(try reply.decoded([Alert].self).isEmpty)
            case .anotherTherapistAcknowledges: #expect(reply.status == .notFound)
            case .thePatientLists: #expect(reply.status == .forbidden)
            case .anEmptyNote: #expect(reply.status == .unprocessableEntity && reply.body.problemFields == ["note"])
            }
            #expect(try await AlertRecord.find(UUID(uuidString: alert.id), on: app.database)?.acknowledgedAt == nil)
        }
    }

    @Test("the recipient acknowledges an alert with a note, once; the note is stored sealed")
    func acknowledged() async throws {
        try await withTestApp { app in
            // setup
            let (therapist, _, _, alert) = try await riskAnswered(app)

            // act
            let acknowledged = try await therapist.send(
                .POST, "/alerts/\(alert.id)/acknowledgement", json: ["note": "Called the patient; safety plan agreed."])
            let again = try await therapist.send(.POST, "/alerts/\(alert.id)/acknowledgement", json: ["note": "again"])

            // verify
            #expect(acknowledged.status == .ok, "\(acknowledged.text)")
            #expect(try acknowledged.decoded(Alert.self).note == "Called the patient; safety plan agreed.")
            #expect(again.status == .conflict)
            let stored = try #require(try await AlertRecord.find(UUID(uuidString: alert.id), on: app.database))
            #expect(stored.note.map { !$0.contains("safety") } == true)
        }
    }

    @Test("an alert acknowledged in time never escalates")
    func acknowledgedInTime() async throws {
        try await withTestApp { app in
            // setup
            let (therapist, _, _, alert) = try await riskAnswered(app)
            _ = try await therapist.send(.POST, "/alerts/\(alert.id)/acknowledgement", json: ["note": "Called."])
            app.clock.advance(by: 2 * 86_400)

            // act
            let escalated = try await AlertService(database: app.database, services: app.app.interlude)
                .escalateOverdue()

            // verify
            #expect(escalated == 0)
        }
    }

    @Test("in a therapist's own practice an overdue alert goes to the administrator")
    func practiceEscalation() async throws {
        try await withTestApp { app in
            // setup
            let (admin, _) = try await app.staff("admin", "admin@clinic.example")
            _ = try await riskAnswered(app)
            app.clock.advance(by: 86_400)

            // act
            let escalated = try await AlertService(database: app.database, services: app.app.interlude)
                .escalateOverdue()

            // verify
            #expect(escalated == 1)
            #expect(try await admin.send(.GET, "/alerts").decoded([Alert].self).count == 1)
        }
    }

    /// A paired patient who also takes part in a research study with a one-time PHQ-9, answered with item 9 at 1.
    func researchRisk(_ app: TestContext) async throws -> (
        researcher: APIClient, therapist: APIClient, admin: APIClient
    ) {
        let (researcher, _) = try await app.staff("researcher", "lab@uni.example")
        let (admin, _) = try await app.staff("admin", "root@interlude.example")
        let (therapist, patient, _) = try await paired(app)
        let studyID = try await StudyAPITests().createStudy(researcher, StudyAPITests.study("open"))
        try #require(
            try await patient.send(.POST, "/studies/\(studyID)/enrollment", json: ["consentVersion": "2026-1"]).status
                == .created)
        let plan = try await researcher.send(
            .POST, "/studies/\(studyID)/plans",
            json: ["instrumentKey": "phq-9", "durationMinutes": 10080, "pattern": ["kind": "once"]])
        try #require(plan.status == .created, "\(plan.text)")
        let prompt = try #require(
            try await PromptRecord.query(on: app.database).filter(\.$instrumentKey == "phq-9").first())
        try #require(prompt.$study.id?.uuidString.lowercased() == studyID)
        app.clock.advance(by: 300)
        let submitted = try await patient.send(
            .POST, "/me/responses",
            json: [
                "id": .string(UUID().uuidString), "promptId": .string(prompt.id!.uuidString), "instrumentKey": "phq-9",
                "version": 1, "answers": QuestionnaireAPITests.phqAnswers([0, 0, 0, 0, 0, 0, 0, 0, 1]),
                "completedAt": Self.iso(app.clock.now),
            ])
        try #require(submitted.status == .created, "\(submitted.text)")
        return (researcher, therapist, admin)
    }

    @Test(
        "PHQ-9 item 9 in a research study alerts the study's staff, never the therapist nor, at first, the administrator"
    )
    func researchAlert() async throws {
        try await withTestApp { app in
            // setup / act
            let (researcher, therapist, admin) = try await researchRisk(app)

            // verify
            let alerts = try await researcher.send(.GET, "/alerts").decoded([Alert].self)
            #expect(alerts.count == 1)
            #expect(alerts.first?.reason.contains("phq9_9 = 1") == true)
            #expect(try await therapist.send(.GET, "/alerts").decoded([Alert].self).isEmpty)
            #expect(try await admin.send(.GET, "/alerts").decoded([Alert].self).isEmpty)
        }
    }

    @Test("an alert nobody acknowledged escalates to the administrator after a day, once, with a mail")
    func escalation() async throws {
        try await withTestApp { app in
            // setup
            _ = try await researchRisk(app)
            let admin = try await app.signIn("root@interlude.example")
            let escalation = AlertService(database: app.database, services: app.app.interlude)
            app.clock.advance(by: 23 * 3600)
            let early = try await escalation.escalateOverdue()
            app.clock.advance(by: 3600)

            // act
            let due = try await escalation.escalateOverdue()
            let again = try await escalation.escalateOverdue()
            try await dispatch(app)

            // verify
            #expect(early == 0 && due == 1 && again == 0)
            let escalated = try await admin.send(.GET, "/alerts").decoded([Alert].self)
            #expect(escalated.map(\.escalated) == [true])
            #expect(escalated.first?.escalatedAt != nil)
            #expect(app.mailer.sent.filter { $0.to == "root@interlude.example" }.count == 1)
        }
    }

    @Test(
        "the administrator acknowledges an escalated research alert, the study's staff see it done, the therapist cannot touch it"
    )
    func escalatedAcknowledged() async throws {
        try await withTestApp { app in
            // setup
            let (researcher, therapist, admin) = try await researchRisk(app)
            app.clock.advance(by: 86_400)
            _ = try await AlertService(database: app.database, services: app.app.interlude).escalateOverdue()
            let alertID = try #require(try await admin.send(.GET, "/alerts").decoded([Alert].self).first?.id)

            // act
            let byTherapist = try await therapist.send(.POST, "/alerts/\(alertID)/acknowledgement", json: ["note": "x"])
            let byAdmin = try await admin.send(
                .POST, "/alerts/\(alertID)/acknowledgement", json: ["note": "Called the study lead."])

            // verify
            #expect(byTherapist.status == .notFound)
            #expect(byAdmin.status == .ok)
            #expect(try await researcher.send(.GET, "/alerts").decoded([Alert].self).first?.acknowledgedAt != nil)
        }
    }

    // MARK: Rules

    static let severe: JSONValue = [
        "name": "Severe depression",
        "trigger": [
            "kind": "submitted", "instrumentKey": "phq-9",
            "condition": [
                "mode": "any",
                "clauses": [["subject": "score", "id": "total", "operator": "greaterOrEqual", "value": 15]],
            ],
        ],
        "action": ["kind": "intervention", "interventionKind": "question", "text": "What helped you most this week?"],
    ]

    /// The rules address of the therapist's practice.
    func rulesPath(_ app: TestContext) async throws -> String {
        let practice = try #require(try await StudyRecord.query(on: app.database).first())
        return "/studies/\(practice.id!.uuidString)/rules"
    }

    static let refusedRules: [(String, JSONValue, Set<String>)] = [
        (
            "an unknown item",
            [
                "name": "x",
                "trigger": [
                    "kind": "submitted", "instrumentKey": "phq-9",
                    "condition": [
                        "mode": "all",
                        "clauses": [["subject": "item", "id": "nope", "operator": "greater", "value": 1]],
                    ],
                ],
                "action": ["kind": "prompt", "instrumentKey": "gad-7", "openHours": 24],
            ],
            ["trigger.condition.clauses.0.id"]
        ),
        (
            "more hours than the contract allows, refused at the door",
            [
                "name": "x", "trigger": ["kind": "submitted", "instrumentKey": "phq-9"],
                "action": ["kind": "prompt", "instrumentKey": "gad-7", "openHours": 1000],
            ],
            ["action.openHours"]
        ),
        (
            "no instrument for a submission",
            ["name": "x", "trigger": ["kind": "submitted"], "action": ["kind": "alert", "message": "m"]],
            ["trigger.instrumentKey"]
        ),
    ]

    @Test(
        "a rule is checked like any input: the problem names each field and nothing is stored", arguments: refusedRules)
    func refusedRule(_ label: String, rule: JSONValue, fields: Set<String>) async throws {
        try await withTestApp { app in
            // setup
            let (therapist, _, _) = try await paired(app)

            // act
            let reply = try await therapist.send(.POST, try await rulesPath(app), json: rule)

            // verify
            #expect(reply.status == .unprocessableEntity, "\(label)")
            #expect(Set(reply.body.problemFields) == fields, "\(label): \(reply.text)")
            #expect(try await app.count("study_rules") == 0)
        }
    }

    @Test("the practice's editor adds a rule and finds it in the list")
    func addRule() async throws {
        try await withTestApp { app in
            // setup
            let (therapist, _, _) = try await paired(app)
            let path = try await rulesPath(app)

            // act
            let added = try await therapist.send(.POST, path, json: Self.severe)

            // verify
            #expect(added.status == .created, "\(added.text)")
            #expect(added.body["trigger"]["condition"]["clauses"][0]["value"].int == 15)
            let listed = try await therapist.send(.GET, path).decoded([Components.Schemas.Rule].self)
            #expect(listed.map(\.id) == [try added.decoded(Components.Schemas.Rule.self).id])
        }
    }

    enum RefusedRuleCaller: String, CaseIterable, Sendable {
        case anotherTherapistLists, anotherTherapistAdds, anotherTherapistDryRuns, anotherTherapistRemoves,
            thePatientLists
    }

    @Test("a practice's rules are refused to other therapists and to patients", arguments: RefusedRuleCaller.allCases)
    func refusedRuleCaller(_ refused: RefusedRuleCaller) async throws {
        try await withTestApp { app in
            // setup
            let (therapist, patient, patientID) = try await paired(app)
            let path = try await rulesPath(app)
            let ruleID = try await therapist.send(.POST, path, json: Self.severe).decoded(Components.Schemas.Rule.self)
                .id
            let (stranger, _) = try await app.staff("therapist", "other@praxis.example")

            // act
            let reply: APIClient.Reply
            switch refused {
            case .anotherTherapistLists: reply = try await stranger.send(.GET, path)
            case .anotherTherapistAdds: reply = try await stranger.send(.POST, path, json: Self.severe)
            case .anotherTherapistDryRuns:
                reply = try await stranger.send(
                    .POST, "\(path)/dry-run", json: ["patientId": .string(patientID.uuidString), "rule": Self.severe])
            case .anotherTherapistRemoves: reply = try await stranger.send(.DELETE, "\(path)/\(ruleID)")
            case .thePatientLists: reply = try await patient.send(.GET, path)
            }

            // verify
            #expect(reply.status == (refused == .thePatientLists ? .forbidden : .notFound), "\(reply.text)")
            #expect(!reply.text.contains("Severe"))
            #expect(try await app.count("study_rules") == 1)
        }
    }

    @Test("a submission that does not meet a rule fires nothing")
    func ruleNotMet() async throws {
        try await withTestApp { app in
            // setup
            let (therapist, patient, patientID) = try await paired(app)
            _ = try await therapist.send(.POST, try await rulesPath(app), json: Self.severe)

            // act: a total of 8
            _ = try await answer(
                app, therapist: therapist, patient: patient, patientID: patientID,
                answers: QuestionnaireAPITests.phqAnswers([1, 1, 1, 1, 1, 1, 1, 1, 0]))

            // verify
            #expect(try await patient.send(.GET, "/me/interventions").decoded([Intervention].self).isEmpty)
            #expect(try await app.count("rule_firings") == 0)
        }
    }

    @Test("a study's own rule fires only while the patient takes part: an enrollment that ended fires nothing")
    func ruleNeedsActiveEnrollment() async throws {
        try await withTestApp { app in
            // setup: a prompt assigned while the patient takes part, and the enrollment ended before the answer
            let (therapist, patient, patientID) = try await paired(app)
            _ = try await therapist.send(.POST, try await rulesPath(app), json: Self.severe)
            let assigned = try await therapist.send(
                .POST, "/patients/\(patientID.uuidString)/prompts",
                json: [
                    "instrumentKey": "phq-9", "opensAt": Self.iso(app.clock.now),
                    "closesAt": Self.iso(app.clock.now.addingTimeInterval(7 * 86_400)),
                ])
            try #require(assigned.status == .created, "\(assigned.text)")
            try await app.sql.raw(
                "UPDATE enrollments SET status = \(bind: EnrollmentStatus.ended.rawValue) WHERE patient_id = \(bind: patientID)"
            ).run()

            // act: a total of 16, which meets the rule
            app.clock.advance(by: 300)
            let submitted = try await patient.send(
                .POST, "/me/responses",
                json: [
                    "id": .string(UUID().uuidString), "promptId": .string(assigned.body["id"].string ?? ""),
                    "instrumentKey": "phq-9", "version": 1,
                    "answers": QuestionnaireAPITests.phqAnswers([2, 2, 2, 2, 2, 2, 2, 2, 0]),
                    "completedAt": Self.iso(app.clock.now),
                ])

            // verify
            #expect(submitted.status == .created, "\(submitted.text)")
            #expect(try await app.count("rule_firings") == 0)
            #expect(try await patient.send(.GET, "/me/interventions").decoded([Intervention].self).isEmpty)
        }
    }

    @Test("a submission that meets a rule sends its intervention and logs the firing with its reason")
    func ruleFires() async throws {
        try await withTestApp { app in
            // setup
            let (therapist, patient, patientID) = try await paired(app)
            _ = try await therapist.send(.POST, try await rulesPath(app), json: Self.severe)

            // act: a total of 16
            _ = try await answer(
                app, therapist: therapist, patient: patient, patientID: patientID,
                answers: QuestionnaireAPITests.phqAnswers([2, 2, 2, 2, 2, 2, 2, 2, 0]))

            // verify
            let inbox = try await patient.send(.GET, "/me/interventions").decoded([Intervention].self)
            #expect(inbox.map(\.origin) == [.rule])
            #expect(inbox.map(\.kind) == [.question])
            let firing = try #require(try await RuleFiringRecord.query(on: app.database).first())
            #expect(
                try app.app.interlude.cipher.open(firing.reason) == "Severe depression: phq-9 score total = 16 (≥ 15)")
            #expect(firing.outcome == "intervention \(try #require(inbox.first).id)")
        }
    }

    @Test("a dry run shows, response by response, when a rule would have fired, and changes nothing")
    func dryRun() async throws {
        try await withTestApp { app in
            // setup: a total of 8, then of 16, before the rule exists
            let (therapist, patient, patientID) = try await paired(app)
            let path = try await rulesPath(app)
            _ = try await answer(
                app, therapist: therapist, patient: patient, patientID: patientID,
                answers: QuestionnaireAPITests.phqAnswers([1, 1, 1, 1, 1, 1, 1, 1, 0]))
            _ = try await answer(
                app, therapist: therapist, patient: patient, patientID: patientID,
                answers: QuestionnaireAPITests.phqAnswers([2, 2, 2, 2, 2, 2, 2, 2, 0]))

            // act
            let dry = try await therapist.send(
                .POST, "\(path)/dry-run", json: ["patientId": .string(patientID.uuidString), "rule": Self.severe])

            // verify: newest first
            #expect(dry.status == .ok, "\(dry.text)")
            #expect(try dry.decoded([Components.Schemas.RuleDryRunLine].self).map(\.fires) == [true, false])
            #expect(try await app.count("study_rules") == 0)
            #expect(try await app.count("rule_firings") == 0)
            #expect(try await patient.send(.GET, "/me/interventions").decoded([Intervention].self).isEmpty)
        }
    }

    @Test("a removed rule leaves the list and fires no more")
    func removeRule() async throws {
        try await withTestApp { app in
            // setup
            let (therapist, patient, patientID) = try await paired(app)
            let path = try await rulesPath(app)
            let ruleID = try await therapist.send(.POST, path, json: Self.severe).decoded(Components.Schemas.Rule.self)
                .id

            // act
            let removed = try await therapist.send(.DELETE, "\(path)/\(ruleID)")

            // verify
            #expect(removed.status == .noContent)
            #expect(try await therapist.send(.GET, path).decoded([Components.Schemas.Rule].self).isEmpty)
            _ = try await answer(
                app, therapist: therapist, patient: patient, patientID: patientID,
                answers: QuestionnaireAPITests.phqAnswers([2, 2, 2, 2, 2, 2, 2, 2, 0]))
            #expect(try await app.count("rule_firings") == 0)
        }
    }

    @Test("three missed prompts in a row alert the therapist once, without a push; a fourth starts no new alert")
    func missedInARow() async throws {
        try await withTestApp { app in
            // setup
            let (therapist, _, patientID) = try await paired(app)
            let added = try await therapist.send(
                .POST, try await rulesPath(app),
                json: [
                    "name": "Three missed", "trigger": ["kind": "missedInARow", "count": 3],
                    "action": ["kind": "alert", "priority": "normal", "message": "Ask how things are going."],
                ])
            try #require(added.status == .created, "\(added.text)")
            let rules = RuleService(database: app.database, services: app.app.interlude)
            func missOne() async throws -> Int {
                let reply = try await therapist.send(
                    .POST, "/patients/\(patientID.uuidString)/prompts",
                    json: [
                        "instrumentKey": "who-5", "opensAt": Self.iso(app.clock.now),
                        "closesAt": Self.iso(app.clock.now.addingTimeInterval(3600)),
                    ])
                try #require(reply.status == .created, "\(reply.text)")
                app.clock.advance(by: 3700)
                _ = try await Planner(database: app.database, services: app.app.interlude).runAll(now: app.clock.now)
                return try await rules.evaluateMissed(since: app.clock.now.addingTimeInterval(-86_400))
            }

            // act
            var fired: [Int] = []
            for _ in 0..<4 { fired.append(try await missOne()) }

            // verify
            #expect(fired == [0, 0, 1, 0])
            let alerts = try await therapist.send(.GET, "/alerts").decoded([Alert].self)
            #expect(alerts.map(\.priority) == [.normal])
            #expect(alerts.first?.reason == "Ask how things are going. (Three missed: 3 prompts in a row expired)")
            #expect(try await app.count("notifications WHERE category = 'alerts'") == 0)
            let record = try #require(try await AlertRecord.query(on: app.database).first())
            var told: [AlertWording.Told?] = []
            for language in [Language.en, .de] {
                told.append(
                    try await AlertWording(
                        database: app.database, services: app.app.interlude, language: language,
                        display: DateDisplay(language: language, timeZone: .gmt)
                    ).tell([record])[try record.requireID()])
            }
            let weekdays = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
            let english = try #require(told[0]?.facts.first)
            #expect(
                english.hasPrefix("Not answered 3 times in a row: questionnaires of any kind; the last was due by "),
                "\(english)")
            #expect(weekdays.contains { english.contains($0) }, "the date with its day: \(english)")
            #expect(
                told[1]?.facts.first?.hasPrefix(
                    "3-mal in Folge nicht beantwortet: Fragebögen jeder Art; zuletzt fällig bis ") == true)
            #expect(
                told[0]?.link == "/console/patients/\(patientID.uuidString)#prompts"
                    && told[0]?.message == "Ask how things are going.")
        }
    }

    @Test("a rule opens a prompt of another instrument for the hours it names, when the band is met")
    func ruleOpensPrompt() async throws {
        try await withTestApp { app in
            // setup
            let (therapist, patient, patientID) = try await paired(app)
            let practice = try #require(try await StudyRecord.query(on: app.database).first())
            let added = try await therapist.send(
                .POST, try await rulesPath(app),
                json: [
                    "name": "Anxiety too",
                    "trigger": [
                        "kind": "submitted", "instrumentKey": "phq-9",
                        "condition": [
                            "mode": "all",
                            "clauses": [
                                ["subject": "band", "id": "total", "operator": "notEquals", "level": "minimal"]
                            ],
                        ],
                    ],
                    "action": ["kind": "prompt", "instrumentKey": "gad-7", "openHours": 48],
                ])
            try #require(added.status == .created, "\(added.text)")
            _ = try await answer(
                app, therapist: therapist, patient: patient, patientID: patientID,
                answers: QuestionnaireAPITests.phqAnswers([0, 0, 0, 0, 0, 0, 0, 1, 0]))
            let afterMinimal = try await PromptRecord.query(on: app.database).filter(\.$instrumentKey == "gad-7")
                .count()

            // act: a mild total
            _ = try await answer(
                app, therapist: therapist, patient: patient, patientID: patientID,
                answers: QuestionnaireAPITests.phqAnswers([2, 1, 1, 1, 0, 0, 0, 1, 0]))

            // verify
            #expect(afterMinimal == 0)
            let opened = try await PromptRecord.query(on: app.database).filter(\.$instrumentKey == "gad-7").all()
            let prompt = try #require(opened.first)
            #expect(opened.count == 1)
            #expect(prompt.source == .rule && prompt.$study.id == practice.id)
            #expect(abs(prompt.closesAt.timeIntervalSince(prompt.opensAt) - 48 * 3600) < 1)
            let open = try await patient.send(.GET, "/me/prompts").decoded([Components.Schemas.Prompt].self)
            #expect(open.contains { $0.instrumentKey == "gad-7" && $0.status == .open })
            let firing = try #require(
                try await RuleFiringRecord.query(on: app.database).filter(\.$ruleName == "Anxiety too").first())
            #expect(try app.app.interlude.cipher.open(firing.reason) == "Anxiety too: phq-9 band of total is mild")
            #expect(firing.outcome == "prompt \(prompt.id!.uuidString.lowercased())")
        }
    }

    // MARK: The encrypted backup

    static let envelope: JSONValue = [
        "algorithm": "PBKDF2-SHA256+AES-256-GCM", "iterations": 600_000,
        "salt": .string(Data(repeating: 7, count: 16).base64EncodedString()),
        "nonce": .string(Data(repeating: 9, count: 12).base64EncodedString()),
        "ciphertext": .string(Data(repeating: 1, count: 40).base64EncodedString()),
    ]

    static let refusedEnvelopes: [(String, JSONValue, Set<String>)] = [
        ("too few iterations", envelope.merging(["iterations": 1000]), ["envelope.iterations"]),
        (
            "salt, nonce and ciphertext too short or not base64",
            envelope.merging(["salt": "AAAA", "nonce": "!!", "ciphertext": "x"]),
            ["envelope.salt", "envelope.nonce", "envelope.ciphertext"]
        ),
    ]

    @Test(
        "a backup envelope is checked at the door, naming each field, and nothing is stored",
        arguments: refusedEnvelopes)
    func refusedBackup(_ label: String, envelope: JSONValue, fields: Set<String>) async throws {
        try await withTestApp { app in
            // setup
            let (_, patient, _) = try await paired(app)

            // act
            let reply = try await patient.send(.PUT, "/me/backup", json: ["baseVersion": 0, "envelope": envelope])

            // verify
            #expect(reply.status == .unprocessableEntity, "\(label): \(reply.text)")
            #expect(Set(reply.body.problemFields) == fields, "\(label): \(reply.text)")
            #expect(try await app.count("intervention_backups") == 0)
        }
    }

    @Test("the backup is stored as sent and replaced only on the version it was based on")
    func backupVersions() async throws {
        try await withTestApp { app in
            // setup
            let (_, patient, _) = try await paired(app)
            let none = try await patient.send(.GET, "/me/backup")

            // act
            let first = try await patient.send(.PUT, "/me/backup", json: ["baseVersion": 0, "envelope": Self.envelope])
            let stale = try await patient.send(.PUT, "/me/backup", json: ["baseVersion": 0, "envelope": Self.envelope])
            let second = try await patient.send(
                .PUT, "/me/backup", json: ["baseVersion": 1, "envelope": Self.envelope])

            // verify
            #expect(none.status == .notFound)
            #expect(try first.decoded(Components.Schemas.Backup.self).version == 1)
            #expect(stale.status == .conflict)
            #expect(try second.decoded(Components.Schemas.Backup.self).version == 2)
            let read = try await patient.send(.GET, "/me/backup").decoded(Components.Schemas.Backup.self)
            #expect(read.envelope.ciphertext == Data(repeating: 1, count: 40).base64EncodedString())
        }
    }

    @Test(
        "the backup is the patient's alone",
        arguments: [("their therapist", true, HTTPStatus.forbidden), ("another patient", false, .notFound)])
    func backupPrivate(_ label: String, therapist asTherapist: Bool, status: HTTPStatus) async throws {
        try await withTestApp { app in
            // setup
            let (therapist, patient, _) = try await paired(app)
            _ = try await patient.send(.PUT, "/me/backup", json: ["baseVersion": 0, "envelope": Self.envelope])
            let caller = asTherapist ? therapist : try await app.patient("other@example.org").client

            // act
            let reply = try await caller.send(.GET, "/me/backup")

            // verify
            #expect(reply.status == status, "\(label)")
            #expect(!reply.text.contains(Data(repeating: 1, count: 40).base64EncodedString()))
        }
    }

    @Test(
        "answers sealed on one device are restored on another with the passphrase; the server never holds them in clear"
    )
    func backupRestore() async throws {
        try await withTestApp { app in
            // setup: answers sealed with a passphrase on the first device
            let (_, patient, _) = try await paired(app)
            let answers = [
                "0c5b8a0e-2f4d-4e7a-9c61-5b1d3e8f2a47": [
                    "answer": "I talked to my sister about the fight.", "done": "true",
                ]
            ]
            let envelope = try InterventionBackup.seal(answers, passphrase: "blue heron at dawn")

            // act
            let stored = try await patient.send(
                .PUT, "/me/backup",
                json: [
                    "baseVersion": 0,
                    "envelope": [
                        "algorithm": .string(envelope.algorithm), "iterations": .int(envelope.iterations),
                        "salt": .string(envelope.salt), "nonce": .string(envelope.nonce),
                        "ciphertext": .string(envelope.ciphertext),
                    ],
                ])
            let otherDevice = try await app.signIn("patient@example.org")
            let fetched = try await otherDevice.send(.GET, "/me/backup").decoded(Components.Schemas.Backup.self)

            // verify: the server holds nothing readable; the other device opens it with the passphrase alone
            #expect(stored.status == .ok, "\(stored.text)")
            for row in try await InterventionBackupRecord.query(on: app.database).all() {
                #expect(!row.envelope.contains("sister") && !row.envelope.contains("heron"))
            }
            #expect(try await app.count("intervention_backups") == 1)
            let restored = InterventionBackup.Envelope(
                algorithm: fetched.envelope.algorithm.rawValue, iterations: fetched.envelope.iterations,
                salt: fetched.envelope.salt,
                nonce: fetched.envelope.nonce, ciphertext: fetched.envelope.ciphertext)
            #expect(
                try InterventionBackup.open(
                    restored, passphrase: "blue heron at dawn", as: [String: [String: String]].self) == answers)
            #expect(throws: InterventionBackup.Failure.cannotOpen) {
                try InterventionBackup.open(
                    restored, passphrase: "blue heron at dusk", as: [String: [String: String]].self)
            }
        }
    }

    // MARK: A study's messages

    /// A research study whose owner wrote one message and planned four a day, with one enrolled participant.
    func messagingStudy(_ app: TestContext) async throws -> (patient: APIClient, studyID: String, grant: StudyGrant) {
        let (researcher, researcherID) = try await app.staff("researcher", "lab@uni.example")
        let (patient, _) = try await app.patient()
        let studyID = try await StudyAPITests().createStudy(researcher, StudyAPITests.study("open"))
        try #require(
            try await patient.send(.POST, "/studies/\(studyID)/enrollment", json: ["consentVersion": "2026-1"]).status
                == .created)
        let owner = try #require(try await UserRecord.find(researcherID, on: app.database))
        let grant = try await StudyAccess(database: app.database, services: app.app.interlude)
            .require(.editLibrary, in: try #require(UUID(uuidString: studyID)), by: owner)
        let library = InterventionLibrary(database: app.database, services: app.app.interlude)
        try await library.addMessage(
            [.en: "Notice one thing you value today.", .de: "Bemerken Sie heute eine Sache, die Ihnen wichtig ist."],
            in: grant)
        try await library.setPlan(
            MessagePlan(perDay: 4, windowStart: LocalTime("00:00")!, windowEnd: LocalTime("23:59")!), in: grant)
        return (patient, studyID, grant)
    }

    func messagePlanner(_ app: TestContext) -> MessagePlanner {
        MessagePlanner(database: app.database, services: app.app.interlude)
    }

    @Test(
        "a study's message is refused when longer than 280 characters",
        arguments: [(280, true), (281, false)])
    func messageLength(_ length: Int, accepted: Bool) async throws {
        try await withTestApp { app in
            // setup
            let (_, _, grant) = try await messagingStudy(app)
            let library = InterventionLibrary(database: app.database, services: app.app.interlude)

            // act
            let text = String(repeating: "x", count: length)
            if accepted {
                try await library.addMessage([.en: "Short", .de: text], in: grant)
            } else {
                await #expect(throws: ValidationFailure.self) {
                    try await library.addMessage([.en: "Short", .de: text], in: grant)
                }
            }

            // verify
            #expect(try await app.count("study_messages") == (accepted ? 2 : 1))
        }
    }

    @Test("a study's messages are planned for its participants, each with a notification, and arrive at their moment")
    func messagesPlanned() async throws {
        try await withTestApp { app in
            // setup
            let (patient, _, _) = try await messagingStudy(app)

            // act
            let planned = try await messagePlanner(app).run(now: app.clock.now)

            // verify
            #expect(planned >= 4 && planned <= 8)
            #expect(try await app.count("notifications WHERE category = 'messages'") == planned)
            let first = try #require(try await InterventionRecord.query(on: app.database).sort(\.$deliverAt).first())
            #expect(try await patient.send(.GET, "/me/interventions").decoded([Intervention].self).isEmpty)
            app.clock.advance(by: first.deliverAt.timeIntervalSince(app.clock.now) + 1)
            let inbox = try await patient.send(.GET, "/me/interventions").decoded([Intervention].self)
            #expect(inbox.map(\.text) == ["Notice one thing you value today."])
            #expect(inbox.map(\.kind) == [.message])
        }
    }

    @Test("a message written only in English reaches a German reader in English")
    func messagesInTheOtherLanguage() async throws {
        try await withTestApp { app in
            // setup: the patient reads German; the pool's one message is written only in English
            let (patient, _, grant) = try await messagingStudy(app)
            try #require(try await patient.send(.PATCH, "/me", json: ["locale": "de"]).status == .ok)
            try await StudyMessageRecord.query(on: app.database).delete()
            try await InterventionLibrary(database: app.database, services: app.app.interlude)
                .addMessage([.en: "Breathe out slowly."], in: grant)

            // act
            _ = try await messagePlanner(app).run(now: app.clock.now)
            let firstGerman = try #require(
                try await InterventionRecord.query(on: app.database).sort(\.$deliverAt).first())

            // verify
            #expect(try app.app.interlude.cipher.open(firstGerman.text) == "Breathe out slowly.")
        }
    }

    @Test("a German reader's message comes in German where the pool has it")
    func messagesInGerman() async throws {
        try await withTestApp { app in
            // setup
            let (patient, _, _) = try await messagingStudy(app)
            try #require(try await patient.send(.PATCH, "/me", json: ["locale": "de"]).status == .ok)

            // act
            _ = try await messagePlanner(app).run(now: app.clock.now)

            // verify
            let first = try #require(try await InterventionRecord.query(on: app.database).sort(\.$deliverAt).first())
            #expect(
                try app.app.interlude.cipher.open(first.text) == "Bemerken Sie heute eine Sache, die Ihnen wichtig ist."
            )
        }
    }

    @Test("leaving the study takes back the messages not yet arrived, and their notifications are never sent")
    func leavingTakesMessagesBack() async throws {
        try await withTestApp { app in
            // setup: the first message has arrived and its notification went out (one email per message)
            let (patient, studyID, _) = try await messagingStudy(app)
            let each = try await DailyMessageEmailTests.chooseMessageEmails(patient, "each")
            try #require(each.status == .ok, "\(each.text)")
            _ = try await messagePlanner(app).run(now: app.clock.now)
            let first = try #require(try await InterventionRecord.query(on: app.database).sort(\.$deliverAt).first())
            app.clock.advance(by: first.deliverAt.timeIntervalSince(app.clock.now) + 1)
            let next = try #require(
                try await InterventionRecord.query(on: app.database).filter(\.$deliverAt > app.clock.now).sort(
                    \.$deliverAt
                ).first())
            let dispatcher = NotificationDispatcher(
                database: app.database, services: app.app.interlude, channels: app.app.notificationChannels)
            _ = try await dispatcher.dispatch(now: app.clock.now)

            // act
            let left = try await patient.send(.DELETE, "/studies/\(studyID)/enrollment")
            _ = try await dispatcher.dispatch(now: next.deliverAt.addingTimeInterval(1))

            // verify
            #expect(left.status == .noContent)
            #expect(try await app.count("interventions") == 1)
            #expect(try await messagePlanner(app).run(now: app.clock.now) == 0)
            let sent = try await NotificationRecord.query(on: app.database).filter(\.$status == NotificationStatus.sent)
                .all().map(\.dedupeKey)
            #expect(sent == [InterventionService.dedupeKey(of: first.id!)])
            let taken = try await NotificationRecord.query(on: app.database)
                .filter(\.$dedupeKey == InterventionService.dedupeKey(of: next.id!)).first()
            #expect(taken?.status == .expired)
        }
    }
}
