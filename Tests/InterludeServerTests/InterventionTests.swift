import Fluent
import Foundation
import InterludeCore
import Testing
import InterludeKit
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
            json: ["instrumentKey": .string(instrument), "opensAt": Self.iso(app.clock.now),
                "closesAt": Self.iso(app.clock.now.addingTimeInterval(7 * 86_400))])
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

    @Test("a therapist sends a task; the patient is notified, opens it and completes it once; nobody else reaches it")
    func sendAndComplete() async throws {
        try await withTestApp { app in
            let (therapist, patient, patientID) = try await paired(app)
            let id = UUID()
            let body: JSONValue = ["id": .string(id.uuidString), "kind": "task", "text": "  Take a ten-minute walk today.  "]
            let sent = try await therapist.send(.POST, "/patients/\(patientID.uuidString)/interventions", json: body)
            #expect(sent.status == .created, "\(sent.text)")
            #expect(sent.body["text"].string == "Take a ten-minute walk today.")
            #expect(sent.body["state"].string == "sent")
            #expect(sent.body["origin"].string == "therapist")
            let retried = try await therapist.send(.POST, "/patients/\(patientID.uuidString)/interventions", json: body)
            #expect(retried.status == .created)
            #expect(retried.body["id"].string == id.uuidString.lowercased())
            #expect(try await app.count("interventions") == 1)
            let stored = try #require(try await InterventionRecord.find(id, on: app.database))
            #expect(!stored.text.contains("walk"), "the text is encrypted at rest")

            // Refused: another therapist's patient, a patient sending, bad input.
            let (stranger, _) = try await app.staff("therapist", "other@praxis.example")
            let foreign = try await stranger.send(.POST, "/patients/\(patientID.uuidString)/interventions", json: ["kind": "task", "text": "x"])
            #expect(foreign.status == .notFound)
            #expect(try await stranger.send(.GET, "/patients/\(patientID.uuidString)/interventions").status == .notFound)
            #expect(try await patient.send(.POST, "/patients/\(patientID.uuidString)/interventions", json: ["kind": "task", "text": "x"]).status == .forbidden)
            let empty = try await therapist.send(.POST, "/patients/\(patientID.uuidString)/interventions", json: ["kind": "question", "text": " "])
            #expect(empty.status == .unprocessableEntity)
            #expect(empty.body.problemFields == ["text"])
            let message = try await therapist.send(.POST, "/patients/\(patientID.uuidString)/interventions", json: ["kind": "message", "text": "x"])
            #expect(message.status == .unprocessableEntity)
            let taken = try await stranger.send(.POST, "/patients/\(patientID.uuidString)/interventions", json: body)
            #expect(taken.status == .notFound)
            #expect(try await app.count("interventions") == 1)

            // The notification names no content.
            let queued = try await NotificationRecord.query(on: app.database).filter(\.$category == .interventions).all()
            #expect(queued.count == 1)
            #expect(queued.first?.path == "/app/interventions/\(id.uuidString.lowercased())")
            #expect(queued.first.map { !$0.body.contains("walk") && !$0.title.contains("walk") } == true)
            try await dispatch(app)
            #expect(app.mailer.sent.contains { $0.to == "patient@example.org" })

            let inbox = try await patient.send(.GET, "/me/interventions")
            #expect(inbox.body.array.map { $0["id"].string } == [id.uuidString.lowercased()])
            let seen = try await patient.send(.POST, "/me/interventions/\(id.uuidString)/seen")
            #expect(seen.body["state"].string == "seen")
            let firstSeen = seen.body["seenAt"].string
            app.clock.advance(by: 60)
            #expect(try await patient.send(.POST, "/me/interventions/\(id.uuidString)/seen").body["seenAt"].string == firstSeen)
            let done = try await patient.send(.POST, "/me/interventions/\(id.uuidString)/completion")
            #expect(done.status == .ok)
            #expect(done.body["state"].string == "completed")
            let twice = try await patient.send(.POST, "/me/interventions/\(id.uuidString)/completion")
            #expect(twice.status == .conflict)
            #expect(twice.body["type"].string?.hasSuffix("intervention-completed") == true)

            let (other, _) = try await app.patient("other@example.org")
            #expect(try await other.send(.POST, "/me/interventions/\(id.uuidString)/seen").status == .notFound)
            #expect(try await other.send(.GET, "/me/interventions").body.array.isEmpty)

            let followed = try await therapist.send(.GET, "/patients/\(patientID.uuidString)/interventions")
            #expect(followed.body[0]["state"].string == "completed")
            #expect(followed.body[0]["completedAt"].string != nil)
            #expect(try await app.count("audit_events WHERE action = 'interventions.read'") == 1)

            let synced = try await patient.send(.GET, "/sync")
            #expect(synced.body["interventions"].array.map { $0["state"].string } == ["completed"])
        }
    }

    @Test("PHQ-9 item 9 above 0 raises exactly one alert; only its recipient acknowledges it, with a note, once")
    func riskAlert() async throws {
        try await withTestApp { app in
            let (therapist, patient, patientID) = try await paired(app)
            _ = try await answer(app, therapist: therapist, patient: patient, patientID: patientID, answers: QuestionnaireAPITests.phqAnswers([1, 1, 0, 0, 0, 0, 0, 0, 0]))
            #expect(try await therapist.send(.GET, "/alerts").body.array.isEmpty)
            _ = try await answer(app, therapist: therapist, patient: patient, patientID: patientID, answers: QuestionnaireAPITests.phqAnswers([1, 1, 0, 0, 0, 0, 0, 0, 2]))
            let alerts = try await therapist.send(.GET, "/alerts")
            #expect(alerts.body.array.count == 1)
            let alert = alerts.body[0]
            #expect(alert["priority"].string == "high")
            #expect(alert["patientId"].string == patientID.uuidString.lowercased())
            #expect(alert["reason"].string?.contains("item phq9_9 = 2") == true)
            #expect(alert["acknowledgedAt"].isNull)
            #expect(try await app.count("rule_firings") == 1)

            try await dispatch(app)
            let email = app.mailer.sent.filter { $0.to == "berger@praxis.example" }
            #expect(email.count == 1)
            #expect(email.first.map { !$0.text.contains("phq9") } == true)

            let alertID = try #require(alert["id"].string)
            let (stranger, _) = try await app.staff("therapist", "other@praxis.example")
            #expect(try await stranger.send(.GET, "/alerts").body.array.isEmpty)
            #expect(try await stranger.send(.POST, "/alerts/\(alertID)/acknowledgement", json: ["note": "x"]).status == .notFound)
            #expect(try await patient.send(.GET, "/alerts").status == .forbidden)
            let noNote = try await therapist.send(.POST, "/alerts/\(alertID)/acknowledgement", json: ["note": "  "])
            #expect(noNote.status == .unprocessableEntity)
            #expect(noNote.body.problemFields == ["note"])
            let acknowledged = try await therapist.send(
                .POST, "/alerts/\(alertID)/acknowledgement", json: ["note": "Called the patient; safety plan agreed."])
            #expect(acknowledged.status == .ok, "\(acknowledged.text)")
            #expect(acknowledged.body["note"].string == "Called the patient; safety plan agreed.")
            #expect(try await therapist.send(.POST, "/alerts/\(alertID)/acknowledgement", json: ["note": "again"]).status == .conflict)
            let stored = try #require(try await AlertRecord.find(UUID(uuidString: alertID), on: app.database))
            #expect(stored.note.map { !$0.contains("safety") } == true, "the note is encrypted at rest")

            // Acknowledged in time: nothing escalates.
            app.clock.advance(by: 2 * 86_400)
            #expect(try await AlertService(database: app.database, services: app.app.interlude).escalateOverdue() == 0)
        }
    }

    @Test("PHQ-9 item 9 in a research study alerts the study's staff, never the therapist; a day later, the administrator")
    func researchAlertAndEscalation() async throws {
        try await withTestApp { app in
            // setup: a paired patient who also takes part in a research study with a one-time PHQ-9
            let (researcher, _) = try await app.staff("researcher", "lab@uni.example")
            let (admin, _) = try await app.staff("admin", "root@interlude.example")
            let (therapist, patient, _) = try await paired(app)
            let studyID = try #require(
                try await researcher.send(.POST, "/studies", json: StudyAPITests.study("open")).body["id"].string)
            #expect(try await patient.send(.POST, "/studies/\(studyID)/enrollment", json: ["consentVersion": "2026-1"]).status == .created)
            let plan = try await researcher.send(
                .POST, "/studies/\(studyID)/plans",
                json: ["instrumentKey": "phq-9", "durationMinutes": 10080, "pattern": ["kind": "once"]])
            try #require(plan.status == .created, "\(plan.text)")
            let prompt = try #require(
                try await PromptRecord.query(on: app.database).filter(\.$instrumentKey == "phq-9").first())
            #expect(prompt.$study.id?.uuidString.lowercased() == studyID)
            app.clock.advance(by: 300)
            // act
            let submitted = try await patient.send(
                .POST, "/me/responses",
                json: [
                    "id": .string(UUID().uuidString), "promptId": .string(prompt.id!.uuidString), "instrumentKey": "phq-9",
                    "version": 1, "answers": QuestionnaireAPITests.phqAnswers([0, 0, 0, 0, 0, 0, 0, 0, 1]),
                    "completedAt": Self.iso(app.clock.now),
                ])
            // verify: the study's owner has it with its reason; the therapist learns nothing of the study
            #expect(submitted.status == .created, "\(submitted.text)")
            #expect(try await therapist.send(.GET, "/alerts").body.array.isEmpty)
            let alerts = try await researcher.send(.GET, "/alerts")
            #expect(alerts.body.array.count == 1)
            #expect(alerts.body[0]["reason"].string?.contains("phq9_9 = 1") == true)
            let alertID = try #require(alerts.body[0]["id"].string)
            #expect(try await admin.send(.GET, "/alerts").body.array.isEmpty)

            let escalation = AlertService(database: app.database, services: app.app.interlude)
            app.clock.advance(by: 23 * 3600)
            #expect(try await escalation.escalateOverdue() == 0)
            app.clock.advance(by: 3600)
            #expect(try await escalation.escalateOverdue() == 1)
            #expect(try await escalation.escalateOverdue() == 0)
            let escalated = try await admin.send(.GET, "/alerts")
            #expect(escalated.body.array.count == 1)
            #expect(escalated.body[0]["escalated"].bool == true)
            #expect(escalated.body[0]["escalatedAt"].string != nil)
            try await dispatch(app)
            #expect(app.mailer.sent.filter { $0.to == "root@interlude.example" }.count == 1)
            #expect(try await therapist.send(.POST, "/alerts/\(alertID)/acknowledgement", json: ["note": "x"]).status == .notFound)
            let done = try await admin.send(.POST, "/alerts/\(alertID)/acknowledgement", json: ["note": "Called the study lead."])
            #expect(done.status == .ok)
            #expect(try await researcher.send(.GET, "/alerts").body[0]["acknowledgedAt"].string != nil)
        }
    }

    @Test("in a therapist's own practice an overdue alert goes to the administrator")
    func practiceEscalation() async throws {
        try await withTestApp { app in
            let (admin, _) = try await app.staff("admin", "admin@clinic.example")
            let (therapist, patient, patientID) = try await paired(app)
            _ = try await answer(app, therapist: therapist, patient: patient, patientID: patientID, answers: QuestionnaireAPITests.phqAnswers([0, 0, 0, 0, 0, 0, 0, 0, 3]))
            app.clock.advance(by: 86_400)
            #expect(try await AlertService(database: app.database, services: app.app.interlude).escalateOverdue() == 1)
            #expect(try await admin.send(.GET, "/alerts").body.array.count == 1)
        }
    }

    @Test("study rules: editors add them, bad ones are refused by field, they fire after a submission with their reason")
    func rules() async throws {
        try await withTestApp { app in
            let (therapist, patient, patientID) = try await paired(app)
            let practice = try #require(try await StudyRecord.query(on: app.database).first())
            let path = "/studies/\(practice.id!.uuidString)/rules"
            let severe: JSONValue = [
                "name": "Severe depression",
                "trigger": ["kind": "submitted", "instrumentKey": "phq-9",
                    "condition": ["mode": "any", "clauses": [["subject": "score", "id": "total", "operator": "greaterOrEqual", "value": 15]]]],
                "action": ["kind": "intervention", "interventionKind": "question", "text": "What helped you most this week?"],
            ]
            let bad: JSONValue = [
                "name": "x",
                "trigger": ["kind": "submitted", "instrumentKey": "phq-9",
                    "condition": ["mode": "all", "clauses": [["subject": "item", "id": "nope", "operator": "greater", "value": 1]]]],
                "action": ["kind": "prompt", "instrumentKey": "gad-7", "openHours": 1000],
            ]
            let refused = try await therapist.send(.POST, path, json: bad)
            #expect(refused.status == .unprocessableEntity)
            #expect(Set(refused.body.problemFields) == ["trigger.condition.clauses.0.id", "action.openHours"])
            let missing = try await therapist.send(.POST, path, json: ["name": "x", "trigger": ["kind": "submitted"], "action": ["kind": "alert", "message": "m"]])
            #expect(missing.status == .unprocessableEntity)
            #expect(missing.body.problemFields == ["trigger.instrumentKey"])
            let added = try await therapist.send(.POST, path, json: severe)
            #expect(added.status == .created, "\(added.text)")
            #expect(added.body["trigger"]["condition"]["clauses"][0]["value"].int == 15)
            #expect(try await therapist.send(.GET, path).body.array.count == 1)
            let (stranger, _) = try await app.staff("therapist", "other@praxis.example")
            #expect(try await stranger.send(.GET, path).status == .notFound)
            #expect(try await stranger.send(.POST, path, json: severe).status == .notFound)
            #expect(try await patient.send(.GET, path).status == .forbidden)

            _ = try await answer(app, therapist: therapist, patient: patient, patientID: patientID, answers: QuestionnaireAPITests.phqAnswers([1, 1, 1, 1, 1, 1, 1, 1, 0]))
            #expect(try await patient.send(.GET, "/me/interventions").body.array.isEmpty)

            // A dry run against the past: fires for none so far, changes nothing.
            let dry = try await therapist.send(.POST, "\(path)/dry-run", json: ["patientId": .string(patientID.uuidString), "rule": severe])
            #expect(dry.status == .ok, "\(dry.text)")
            #expect(dry.body.array.map { $0["fires"].bool } == [false])
            #expect(try await stranger.send(.POST, "\(path)/dry-run", json: ["patientId": .string(patientID.uuidString), "rule": severe]).status == .notFound)

            _ = try await answer(app, therapist: therapist, patient: patient, patientID: patientID, answers: QuestionnaireAPITests.phqAnswers([2, 2, 2, 2, 2, 2, 2, 2, 0]))
            let inbox = try await patient.send(.GET, "/me/interventions")
            #expect(inbox.body.array.count == 1)
            #expect(inbox.body[0]["origin"].string == "rule")
            #expect(inbox.body[0]["kind"].string == "question")
            let firing = try #require(try await RuleFiringRecord.query(on: app.database).first())
            #expect(try app.app.interlude.cipher.open(firing.reason) == "Severe depression: phq-9 score total = 16 (≥ 15)")
            #expect(firing.outcome.hasPrefix("intervention "))
            let again = try await therapist.send(.POST, "\(path)/dry-run", json: ["patientId": .string(patientID.uuidString), "rule": severe])
            #expect(again.body.array.map { $0["fires"].bool } == [true, false])
            #expect(try await app.count("rule_firings") == 1)

            let ruleID = try #require(added.body["id"].string)
            #expect(try await stranger.send(.DELETE, "\(path)/\(ruleID)").status == .notFound)
            #expect(try await therapist.send(.DELETE, "\(path)/\(ruleID)").status == .noContent)
            #expect(try await therapist.send(.GET, path).body.array.isEmpty)
        }
    }

    @Test("three missed prompts in a row alert the therapist once; an answer starts a new run")
    func missedInARow() async throws {
        try await withTestApp { app in
            let (therapist, _, patientID) = try await paired(app)
            let practice = try #require(try await StudyRecord.query(on: app.database).first())
            let added = try await therapist.send(
                .POST, "/studies/\(practice.id!.uuidString)/rules",
                json: ["name": "Three missed", "trigger": ["kind": "missedInARow", "count": 3],
                    "action": ["kind": "alert", "priority": "normal", "message": "Ask how things are going."]])
            #expect(added.status == .created, "\(added.text)")
            func assignShort() async throws {
                let reply = try await therapist.send(
                    .POST, "/patients/\(patientID.uuidString)/prompts",
                    json: ["instrumentKey": "who-5", "opensAt": Self.iso(app.clock.now),
                        "closesAt": Self.iso(app.clock.now.addingTimeInterval(3600))])
                try #require(reply.status == .created, "\(reply.text)")
                app.clock.advance(by: 3700)
                _ = try await Planner(database: app.database, services: app.app.interlude).runAll(now: app.clock.now)
            }
            let rules = RuleService(database: app.database, services: app.app.interlude)
            for _ in 0..<2 { try await assignShort() }
            #expect(try await rules.evaluateMissed(since: app.clock.now.addingTimeInterval(-86_400)) == 0)
            try await assignShort()
            #expect(try await rules.evaluateMissed(since: app.clock.now.addingTimeInterval(-86_400)) == 1)
            try await assignShort()
            #expect(try await rules.evaluateMissed(since: app.clock.now.addingTimeInterval(-86_400)) == 0)
            let alerts = try await therapist.send(.GET, "/alerts")
            #expect(alerts.body.array.count == 1)
            #expect(alerts.body[0]["priority"].string == "normal")
            #expect(alerts.body[0]["reason"].string == "Ask how things are going. (Three missed: 3 prompts in a row expired)")
            #expect(try await app.count("notifications WHERE category = 'alerts'") == 0)
        }
    }

    @Test("the encrypted backup: stored as sent, replaced only on the version it was based on, the patient's alone")
    func backup() async throws {
        try await withTestApp { app in
            let (therapist, patient, _) = try await paired(app)
            let envelope: JSONValue = [
                "algorithm": "PBKDF2-SHA256+AES-256-GCM", "iterations": 600_000,
                "salt": .string(Data(repeating: 7, count: 16).base64EncodedString()),
                "nonce": .string(Data(repeating: 9, count: 12).base64EncodedString()),
                "ciphertext": .string(Data(repeating: 1, count: 40).base64EncodedString()),
            ]
            #expect(try await patient.send(.GET, "/me/backup").status == .notFound)
            let weak = try await patient.send(
                .PUT, "/me/backup", json: ["baseVersion": 0, "envelope": ["algorithm": "PBKDF2-SHA256+AES-256-GCM", "iterations": 1000, "salt": "AAAA", "nonce": "!!", "ciphertext": "x"]])
            #expect(weak.status == .badRequest || weak.status == .unprocessableEntity)
            let short = try await patient.send(
                .PUT, "/me/backup",
                json: ["baseVersion": 0, "envelope": ["algorithm": "PBKDF2-SHA256+AES-256-GCM", "iterations": 600_000, "salt": "AAAA", "nonce": "!!", "ciphertext": "x"]])
            #expect(short.status == .unprocessableEntity)
            #expect(Set(short.body.problemFields) == ["envelope.salt", "envelope.nonce", "envelope.ciphertext"])
            #expect(try await app.count("intervention_backups") == 0)
            let first = try await patient.send(.PUT, "/me/backup", json: ["baseVersion": 0, "envelope": envelope])
            #expect(first.status == .ok, "\(first.text)")
            #expect(first.body["version"].int == 1)
            let stale = try await patient.send(.PUT, "/me/backup", json: ["baseVersion": 0, "envelope": envelope])
            #expect(stale.status == .conflict)
            #expect(try await patient.send(.PUT, "/me/backup", json: ["baseVersion": 1, "envelope": envelope]).body["version"].int == 2)
            let read = try await patient.send(.GET, "/me/backup")
            #expect(read.body["envelope"]["ciphertext"].string == Data(repeating: 1, count: 40).base64EncodedString())
            #expect(try await therapist.send(.GET, "/me/backup").status == .forbidden)
            let (other, _) = try await app.patient("other@example.org")
            #expect(try await other.send(.GET, "/me/backup").status == .notFound)
        }
    }

    @Test("answers sealed on one device are restored on another with the passphrase; the server never holds them in clear")
    func backupRestore() async throws {
        try await withTestApp { app in
            let (_, patient, _) = try await paired(app)
            let answers = ["0c5b8a0e-2f4d-4e7a-9c61-5b1d3e8f2a47": ["answer": "I talked to my sister about the fight.", "done": "true"]]
            let envelope = try InterventionBackup.seal(answers, passphrase: "blue heron at dawn")
            let stored = try await patient.send(
                .PUT, "/me/backup",
                json: ["baseVersion": 0, "envelope": ["algorithm": .string(envelope.algorithm), "iterations": .int(envelope.iterations),
                    "salt": .string(envelope.salt), "nonce": .string(envelope.nonce), "ciphertext": .string(envelope.ciphertext)]])
            #expect(stored.status == .ok, "\(stored.text)")
            for row in try await InterventionBackupRecord.query(on: app.database).all() {
                #expect(!row.envelope.contains("sister") && !row.envelope.contains("heron"))
            }
            #expect(try await app.count("intervention_backups") == 1)

            // Another device: signed in afresh, it has nothing but the passphrase.
            let otherDevice = try await app.signIn("patient@example.org")
            let fetched = try await otherDevice.send(.GET, "/me/backup")
            let restored = InterventionBackup.Envelope(
                algorithm: fetched.body["envelope"]["algorithm"].string ?? "", iterations: fetched.body["envelope"]["iterations"].int ?? 0,
                salt: fetched.body["envelope"]["salt"].string ?? "", nonce: fetched.body["envelope"]["nonce"].string ?? "",
                ciphertext: fetched.body["envelope"]["ciphertext"].string ?? "")
            #expect(try InterventionBackup.open(restored, passphrase: "blue heron at dawn", as: [String: [String: String]].self) == answers)
            #expect(throws: InterventionBackup.Failure.cannotOpen) {
                try InterventionBackup.open(restored, passphrase: "blue heron at dusk", as: [String: [String: String]].self)
            }
        }
    }

    @Test("a study's messages are planned for its participants, arrive with a notification, and stop when one leaves")
    func reinforcementMessages() async throws {
        try await withTestApp { app in
            let (researcher, researcherID) = try await app.staff("researcher", "lab@uni.example")
            let (patient, patientID) = try await app.patient()
            let studyID = try #require(
                try await researcher.send(.POST, "/studies", json: StudyAPITests.study("open")).body["id"].string)
            #expect(try await patient.send(.POST, "/studies/\(studyID)/enrollment", json: ["consentVersion": "2026-1"]).status == .created)
            let study = try #require(UUID(uuidString: studyID))
            let owner = try #require(try await UserRecord.find(researcherID, on: app.database))
            let library = InterventionLibrary(database: app.database, services: app.app.interlude)
            let grant = try await StudyAccess(database: app.database, services: app.app.interlude).require(.editLibrary, in: study, by: owner)
            try await library.addMessage("Notice one thing you value today.", in: grant)
            await #expect(throws: ValidationFailure.self) {
                try await library.addMessage(String(repeating: "x", count: 281), in: grant)
            }
            try await library.setPlan(
                MessagePlan(perDay: 4, windowStart: LocalTime("00:00")!, windowEnd: LocalTime("23:59")!), in: grant)
            let planner = MessagePlanner(database: app.database, services: app.app.interlude)
            let planned = try await planner.run(now: app.clock.now)
            #expect(planned >= 4 && planned <= 8)
            #expect(try await app.count("notifications WHERE category = 'messages'") == planned)

            // The first arrives: the patient reads it in the inbox; the rest wait for their moment.
            let first = try #require(
                try await InterventionRecord.query(on: app.database).sort(\.$deliverAt).first())
            app.clock.advance(by: first.deliverAt.timeIntervalSince(app.clock.now) + 1)
            let inbox = try await patient.send(.GET, "/me/interventions")
            #expect(inbox.body.array.map { $0["text"].string } == ["Notice one thing you value today."])
            #expect(inbox.body[0]["kind"].string == "message")

            // Leaving the study takes back what had not arrived yet; planning again adds nothing, and the
            // notifications of the messages taken back are not sent.
            let next = try #require(
                try await InterventionRecord.query(on: app.database).filter(\.$deliverAt > app.clock.now).sort(\.$deliverAt).first())
            #expect(try await patient.send(.DELETE, "/studies/\(studyID)/enrollment").status == .noContent)
            #expect(try await app.count("interventions") == 1)
            #expect(try await planner.run(now: app.clock.now) == 0)
            _ = try await NotificationDispatcher(
                database: app.database, services: app.app.interlude, channels: app.app.notificationChannels
            ).dispatch(now: next.deliverAt.addingTimeInterval(1))
            let sent = try await NotificationRecord.query(on: app.database).filter(\.$status == NotificationStatus.sent).all().map(\.dedupeKey)
            #expect(sent == [InterventionService.dedupeKey(of: first.id!)])
            let taken = try await NotificationRecord.query(on: app.database)
                .filter(\.$dedupeKey == InterventionService.dedupeKey(of: next.id!)).first()
            #expect(taken?.status == .expired)
        }
    }

    @Test("a rule opens a prompt of another instrument for the hours it names, once per response")
    func ruleOpensPrompt() async throws {
        try await withTestApp { app in
            let (therapist, patient, patientID) = try await paired(app)
            let practice = try #require(try await StudyRecord.query(on: app.database).first())
            let added = try await therapist.send(
                .POST, "/studies/\(practice.id!.uuidString)/rules",
                json: ["name": "Anxiety too", "trigger": ["kind": "submitted", "instrumentKey": "phq-9",
                    "condition": ["mode": "all", "clauses": [["subject": "band", "id": "total", "operator": "notEquals", "level": "minimal"]]]],
                    "action": ["kind": "prompt", "instrumentKey": "gad-7", "openHours": 48]])
            #expect(added.status == .created, "\(added.text)")
            _ = try await answer(app, therapist: therapist, patient: patient, patientID: patientID, answers: QuestionnaireAPITests.phqAnswers([0, 0, 0, 0, 0, 0, 0, 1, 0]))
            #expect(try await PromptRecord.query(on: app.database).filter(\.$instrumentKey == "gad-7").count() == 0)
            _ = try await answer(app, therapist: therapist, patient: patient, patientID: patientID, answers: QuestionnaireAPITests.phqAnswers([2, 1, 1, 1, 0, 0, 0, 1, 0]))
            let opened = try await PromptRecord.query(on: app.database).filter(\.$instrumentKey == "gad-7").all()
            #expect(opened.count == 1)
            #expect(opened.first?.source == .rule)
            #expect(opened.first.map { abs($0.closesAt.timeIntervalSince($0.opensAt) - 48 * 3600) < 1 } == true)
            #expect(opened.first?.$study.id == practice.id)
            let open = try await patient.send(.GET, "/me/prompts")
            #expect(open.body.array.contains { $0["instrumentKey"].string == "gad-7" && $0["status"].string == "open" })
            let firing = try #require(try await RuleFiringRecord.query(on: app.database).filter(\.$ruleName == "Anxiety too").first())
            #expect(try app.app.interlude.cipher.open(firing.reason) == "Anxiety too: phq-9 band of total is mild")
            #expect(firing.outcome == "prompt \(opened.first!.id!.uuidString.lowercased())")
        }
    }
}
