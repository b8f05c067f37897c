import Fluent
import Foundation
import InterludeCore
import Testing

@testable import InterludeServer

@Suite("The session report and notes pinned to days")
struct SessionReportTests {
    struct World {
        let therapist: APIClient
        let patient: APIClient
        let patientID: UUID
        let today: String
    }

    /// A client who answered a PHQ-9 (26, item 9 above 0), the mood scale three times at random moments (20, 40, 90),
    /// which the practice's rule "Low mood" picks out below 30, and missed it once, and recorded a health event.
    func world(_ app: TestContext) async throws -> World {
        let questionnaires = QuestionnaireAPITests()
        let (therapist, patient, patientID, phqPrompt) = try await questionnaires.setUp(app)
        let practice = try #require(
            try await EnrollmentRecord.query(on: app.database).filter(\.$patient.$id == patientID).first()
        ).$study.id
        let rule = try await therapist.send(
            .POST, "/studies/\(practice)/rules",
            json: [
                "name": "Low mood",
                "trigger": [
                    "kind": "submitted", "instrumentKey": "mood-vas",
                    "condition": [
                        "mode": "all", "clauses": [["subject": "item", "id": "mood", "operator": "less", "value": 30]],
                    ],
                ],
                "action": ["kind": "alert", "priority": "normal", "message": "Mood below 30"],
            ])
        try #require(rule.status == .created, "\(rule.text)")
        let severe = QuestionnaireAPITests.phqAnswers([3, 3, 3, 3, 3, 3, 3, 3, 2])
        let answered = try await patient.send(
            .POST, "/me/responses",
            json: questionnaires.submission(phqPrompt, answers: severe, completedAt: app.clock.now))
        try #require(answered.status == .created, "\(answered.text)")
        app.clock.advance(by: 60)
        let plan = try await therapist.send(
            .POST, "/studies/\(practice)/plans",
            json: [
                "instrumentKey": "mood-vas", "durationMinutes": 60,
                "pattern": ["kind": "randomWindows", "days": ScheduleAPITests.everyDay(ScheduleAPITests.dailyWindows)],
            ])
        try #require(plan.status == .created, "\(plan.text)")
        let planID = try #require(UUID(uuidString: plan.body["id"].string ?? ""))
        try await PromptRecord.query(on: app.database).filter(\.$planID == planID).delete()
        for mood in [20, 40, 90, nil] {
            let prompt = PromptRecord(
                patientID: patientID, studyID: practice, assignedBy: nil, instrumentKey: "mood-vas",
                instrumentVersion: 1,
                opensAt: app.clock.now, closesAt: app.clock.now.addingTimeInterval(1800), source: .schedule,
                now: app.clock.now)
            prompt.planID = planID
            try await prompt.create(on: app.database)
            if let mood {
                let reply = try await patient.send(
                    .POST, "/me/responses",
                    json: ConsentVersionTests.response(
                        prompt: try prompt.requireID(),
                        answering: .init(key: "mood-vas", version: 1, answers: ["mood": .int(mood)]), app))
                try #require(reply.status == .created, "\(reply.text)")
            }
            app.clock.advance(by: 3600)
        }
        let event = try await patient.send(
            .POST, "/me/events", json: RecordAPITests.event(app, title: "Started running", type: "other"))
        try #require(event.status == .created, "\(event.text)")
        return World(
            therapist: therapist, patient: patient, patientID: patientID,
            today: LocalDate(app.clock.now, in: TimeZone(identifier: "Europe/Vienna")!).description)
    }

    @Test(
        "the report holds the period's scores and bands, the momentary summary, notable answers, alerts, compliance, events and notes"
    )
    func report() async throws {
        try await withTestApp { app in
            // setup
            let world = try await world(app)
            let path = "/patients/\(world.patientID)"
            let pinned = try await world.therapist.send(
                .POST, "\(path)/notes", json: ["day": .string(world.today), "text": "Holiday begins"])
            try #require(pinned.status == .created, "\(pinned.text)")

            // act
            let report = try await world.therapist.send(.GET, "\(path)/report?from=\(world.today)&to=\(world.today)")
                .decoded(Components.Schemas.SessionReport.self)
            let before = try await world.therapist.send(.GET, "\(path)/report?from=2020-01-01&to=2020-01-31")
                .decoded(Components.Schemas.SessionReport.self)
            let byDefault = try await world.therapist.send(.GET, "\(path)/report")

            // verify
            let phq = try #require(report.instruments.first { $0.instrumentKey == "phq-9" })
            let total = try #require(phq.scores.first)
            #expect(total.points.map(\.value) == [26])
            #expect(total.points.first?.band?.level == "severe")
            let mood = try #require(report.momentary.first)
            #expect(report.momentary.count == 1)
            #expect(mood.instrumentKey == "mood-vas")
            #expect(mood.answered == 3 && mood.missed == 1)
            #expect(mood.items.first.map { [$0.count, Int($0.mean), Int($0.min), Int($0.max)] } == [3, 50, 20, 90])
            #expect(report.notable.map(\.kind) == [.crisisItem, .rule])
            #expect(report.notable.first?.title.contains("better off dead") == true)
            #expect(report.notable.first?.value.isEmpty == false)
            #expect(report.notable.last?.title == "Low mood")
            #expect(
                report.notable.last?.value.contains("How do you feel right now?") == true, "what met the rule, in words"
            )
            #expect(report.notable.last?.value.contains("mood <") == false)
            #expect(report.alerts.map(\.priority).sorted { $0.rawValue < $1.rawValue } == [.high, .normal])
            #expect(report.compliance.answered == 4 && report.compliance.missed == 1 && report.compliance.percent == 80)
            #expect(report.events.map(\.title) == ["Started running"])
            #expect(report.notes.map(\.text) == ["Holiday begins"])
            #expect(report.notes.first?.day == world.today)
            #expect(
                before.instruments.isEmpty && before.notable.isEmpty && before.alerts.isEmpty && before.events.isEmpty)
            #expect(before.notes.isEmpty && before.compliance.answered == 0)
            #expect(byDefault.status == .ok)
            #expect(byDefault.body["to"].string == world.today)
        }
    }

    @Test(
        "a momentary questionnaire of choices, like the Intersession Daily, fills the report's table with its answers' values"
    )
    func momentaryChoices() async throws {
        try await withTestApp { app in
            // setup
            let (therapist, patient, patientID, _) = try await QuestionnaireAPITests().setUp(app)
            let practice = try #require(
                try await EnrollmentRecord.query(on: app.database).filter(\.$patient.$id == patientID).first()
            ).$study.id
            let plan = try await therapist.send(
                .POST, "/studies/\(practice)/plans",
                json: [
                    "instrumentKey": "intersession-daily", "durationMinutes": 60,
                    "pattern": [
                        "kind": "randomWindows", "days": ScheduleAPITests.everyDay(ScheduleAPITests.dailyWindows),
                    ],
                ])
            try #require(plan.status == .created, "\(plan.text)")
            let planID = try #require(UUID(uuidString: plan.body["id"].string ?? ""))
            try await PromptRecord.query(on: app.database).filter(\.$planID == planID).delete()
            for feeling in ["4", "2"] {
                let prompt = PromptRecord(
                    patientID: patientID, studyID: practice, assignedBy: nil, instrumentKey: "intersession-daily",
                    instrumentVersion: 1,
                    opensAt: app.clock.now, closesAt: app.clock.now.addingTimeInterval(1800), source: .schedule,
                    now: app.clock.now)
                prompt.planID = planID
                try await prompt.create(on: app.database)
                let reply = try await patient.send(
                    .POST, "/me/responses",
                    json: ConsentVersionTests.response(
                        prompt: try prompt.requireID(),
                        answering: .init(
                            key: "intersession-daily", version: 1,
                            answers: ["thought": .bool(true), "feeling": .string(feeling)]), app))
                try #require(reply.status == .created, "\(reply.text)")
                app.clock.advance(by: 3600)
            }
            let today = LocalDate(app.clock.now, in: TimeZone(identifier: "Europe/Vienna")!).description

            // act
            let report = try await therapist.send(.GET, "/patients/\(patientID)/report?from=\(today)&to=\(today)")
                .decoded(Components.Schemas.SessionReport.self)
            let own = try await patient.send(.GET, "/me/results").decoded([Components.Schemas.InstrumentResults].self)

            // verify
            let daily = try #require(report.momentary.first { $0.instrumentKey == "intersession-daily" })
            #expect(daily.answered == 2)
            let feeling = try #require(daily.items.first { $0.title == "How did you feel when you thought of it?" })
            #expect(feeling.count == 2)
            #expect([feeling.mean, feeling.min, feeling.max] == [3, 2, 4])
            // The client's own chart of "thought of therapy" is a yes/no question; the feeling is a scale from 1 to 5.
            let scores = try #require(own.first { $0.instrumentKey == "intersession-daily" }).scores
            #expect(
                scores.first { $0.id == "thought" }.map { [$0.yesNo, $0.low == 0, $0.high == 1] } == [true, true, true])
            #expect(
                scores.first { $0.id == "feeling" }.map { [$0.yesNo == true, $0.low == 1, $0.high == 5] } == [
                    false, true, true,
                ])
        }
    }

    @Test("a period that is no period is refused naming the field; another therapist learns nothing")
    func refused() async throws {
        try await withTestApp { app in
            // setup
            let world = try await world(app)
            let path = "/patients/\(world.patientID)"
            let (other, _) = try await app.staff("therapist", "huber@praxis.example")

            // act
            let backwards = try await world.therapist.send(.GET, "\(path)/report?from=2026-03-02&to=2026-03-01")
            let notADate = try await world.therapist.send(.GET, "\(path)/report?from=soon")
            let tooLong = try await world.therapist.send(.GET, "\(path)/report?from=2020-01-01&to=2026-03-01")
            let farOut = try await world.therapist.send(.GET, "\(path)/report?to=9999-12-31")
            let othersReport = try await other.send(.GET, "\(path)/report")
            let othersNote = try await other.send(.POST, "\(path)/notes", json: ["day": "2026-03-02", "text": "Mine"])

            // verify
            #expect(backwards.body.problemFields == ["to"])
            #expect(notADate.body.problemFields == ["from"])
            #expect(tooLong.body.problemCodes == ["to": "outOfRange"])
            #expect(farOut.body.problemCodes == ["to": "outOfRange"])
            #expect(othersReport.status == .notFound)
            #expect(othersNote.status == .notFound)
            #expect(try await app.count("pinned_notes") == 0)
        }
    }

    @Test("a pinned note reaches the client's charts, is refused with its fields named, and goes when it is removed")
    func notes() async throws {
        try await withTestApp { app in
            // setup
            let world = try await world(app)
            let path = "/patients/\(world.patientID)/notes"
            let therapist = try #require(
                try await UserRecord.query(on: app.database).filter(\.$role == .therapist).first())
            therapist.name = "Dr. Anna Berger"
            try await therapist.save(on: app.database)

            // act
            let empty = try await world.therapist.send(.POST, path, json: ["day": "2026-03-02", "text": "  "])
            let badDay = try await world.therapist.send(.POST, path, json: ["day": "2026-02-30", "text": "Holiday"])
            let tooLong = try await world.therapist.send(
                .POST, path,
                json: [
                    "day": "2026-03-02", "text": .string(String(repeating: "a", count: PinnedNote.textMaxLength + 1)),
                ])
            let pinned = try await world.therapist.send(
                .POST, path, json: ["day": "2026-03-02", "text": "New medication"])
            let seen = try await world.patient.send(.GET, "/me/notes").decoded([Components.Schemas.PinnedNote].self)
            let outside = try await world.patient.send(.GET, "/me/notes?from=2026-03-03").decoded(
                [Components.Schemas.PinnedNote].self)
            let stored = try #require(try await PinnedNoteRecord.query(on: app.database).first())
            let removed = try await world.therapist.send(.DELETE, "\(path)/\(pinned.body["id"].string ?? "")")
            let again = try await world.therapist.send(.DELETE, "\(path)/\(pinned.body["id"].string ?? "")")
            let afterwards = try await world.patient.send(.GET, "/me/notes").decoded(
                [Components.Schemas.PinnedNote].self)
            for day in ["2026-03-05", "2026-03-03", "2026-03-04"] {
                try #require(
                    try await world.therapist.send(.POST, path, json: ["day": .string(day), "text": "Note"]).status
                        == .created)
            }
            let pages = try await CaseloadListTests.pages(world.patient, "/me/notes?limit=2")

            // verify
            #expect(empty.body.problemCodes == ["text": "required"])
            #expect(badDay.body.problemCodes == ["day": "invalidFormat"])
            #expect(tooLong.body.problemCodes == ["text": "tooLong"])
            #expect(pinned.status == .created)
            #expect(seen.map(\.text) == ["New medication"])
            #expect(seen.first?.day == "2026-03-02")
            #expect(seen.first?.author == "Dr. Anna Berger")
            #expect(outside.isEmpty)
            #expect(stored.text.contains("medication") == false, "sealed at rest")
            #expect(removed.status == .noContent)
            #expect(again.status == .notFound)
            #expect(afterwards.isEmpty)
            #expect(
                pages.map { $0.compactMap { $0["day"].string } } == [["2026-03-03", "2026-03-04"], ["2026-03-05"]],
                "by day, page by page")
        }
    }
}

@Suite("The session report on the console")
struct ConsoleReportTests {
    @Test(
        "the page shows the period's charts with the pinned notes marked, the tables and lists, and prints without its forms"
    )
    func page() async throws {
        try await withTestApp { app in
            // setup
            let world = try await SessionReportTests().world(app)
            let console = ConsoleBrowser(app)
            _ = try await console.signIn("berger@praxis.example")
            let path = "/console/patients/\(world.patientID)"
            _ = try await console.get("\(path)/report")

            // act
            let pinned = try await console.post(
                "\(path)/notes",
                [("day", world.today), ("text", "Holiday <begins>"), ("from", world.today), ("to", world.today)])
            let shown = try await console.get(try #require(pinned.location))
            let refused = try await console.post("\(path)/notes", [("day", "someday"), ("text", "")])
            let wrongPeriod = try await console.get("\(path)/report?from=2026-03-05&to=2026-03-01")
            let noteID = try #require(try await PinnedNoteRecord.query(on: app.database).first()?.requireID())
            let removed = try await console.post(
                "\(path)/notes/\(noteID)/delete", [("from", world.today), ("to", world.today)])
            let afterwards = try await console.get(try #require(removed.location))
            let patientPage = try await console.get(path)

            // verify
            #expect(pinned.status == .seeOther)
            #expect(pinned.location == "\(path)/report?from=\(world.today)&to=\(world.today)&done=pinned")
            #expect(shown.status == .ok)
            #expect(shown.html.contains("The note is pinned"))
            #expect(shown.html.contains("<strong>Holiday &lt;begins&gt;</strong>"), "the note is listed, escaped")
            #expect(
                shown.html.contains("class=\"event-marker\"><title>")
                    && shown.html.contains(": Holiday &lt;begins&gt;</title>"),
                "the note marks its day on the charts")
            #expect(shown.html.contains("PHQ-9"))
            #expect(shown.html.contains("<td>3</td><td>50</td><td>20–90</td>"), "the momentary summary")
            #expect(shown.html.contains("Low mood") && shown.html.contains("better off dead"))
            #expect(shown.html.contains("Started running"))
            #expect(shown.html.contains("<dd>80 %</dd>"))
            #expect(shown.html.contains("class=\"card no-print\""), "the period form does not print")
            #expect(refused.status == .unprocessableEntity)
            #expect(refused.html.contains("id=\"day-error\"") && refused.html.contains("id=\"text-error\""))
            #expect(wrongPeriod.status == .unprocessableEntity && wrongPeriod.html.contains("id=\"to-error\""))
            #expect(removed.status == .seeOther)
            #expect(
                afterwards.html.contains("The note is removed") && !afterwards.html.contains("Holiday &lt;begins&gt;"))
            #expect(patientPage.html.contains("href=\"\(path)/report\" id=\"report-link\""))
            #expect(try await app.count("pinned_notes") == 0)
        }
    }
}
