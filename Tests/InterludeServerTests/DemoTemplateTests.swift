import Fluent
import Foundation
import InterludeCore
import Testing
import VaporTesting

@testable import InterludeServer

@Suite("Demo templates")
struct DemoTemplateTests {
    let vienna = TimeZone(identifier: "Europe/Vienna")!

    func create(_ template: DemoSetup.Template, _ app: TestContext) async throws -> [DemoSetup.Account] {
        try await DemoSetup(database: app.database, services: app.app.interlude, logger: app.app.logger).create(template)
    }

    func account(_ role: Role, in accounts: [DemoSetup.Account]) throws -> DemoSetup.Account {
        try #require(accounts.first { $0.role == role })
    }

    func date(_ value: JSON) throws -> Date {
        try #require(value.string.flatMap { try? Date($0, strategy: .iso8601) })
    }

    func answer(_ prompt: JSON, _ answers: JSONValue, as patient: APIClient, at now: Date) async throws
        -> HTTPResponseStatus
    {
        try await patient.send(
            .POST, "/me/responses",
            json: [
                "id": .string(UUID().uuidString), "promptId": JSONValue(prompt["id"].string),
                "instrumentKey": JSONValue(prompt["instrumentKey"].string),
                "version": .int(prompt["instrumentVersion"].int ?? 0), "answers": answers,
                "completedAt": QuestionnaireAPITests.iso(now),
            ]
        ).status
    }

    @Test("intersession: the Daily three times a day in its windows, the ISF-K from 24 hours before each session")
    func intersession() async throws {
        try await withTestApp { app in
            let accounts = try await create(.intersession, app)
            #expect(accounts.map(\.role) == [.therapist, .patient])
            #expect(accounts.allSatisfy { $0.line.wholeMatch(of: /(therapist|patient): \S+@\S+ \S{12,}/) != nil })
            let therapistAccount = try account(.therapist, in: accounts)
            let patientAccount = try account(.patient, in: accounts)
            let therapist = try await app.signIn(therapistAccount.email, password: therapistAccount.password)
            let patient = try await app.signIn(patientAccount.email, password: patientAccount.password)
            #expect(try await patient.send(.GET, "/me").body["timeZone"].string == "Europe/Vienna")
            #expect(try await patient.send(.GET, "/me/therapist").body["emergencyNumber"].string == "+43 1 000 00 99")
            let practice = try #require(try await StudyRecord.query(on: app.database).filter(\.$joinMode == .pairingCode).first())
            let rules = try await therapist.send(.GET, "/studies/\(practice.id!.uuidString)/rules")
            #expect(rules.body.array.map { $0["name"].string } == ["Three Dailies missed"])
            #expect(try await app.count("intervention_templates") == 2)

            let caseload = try await therapist.send(.GET, "/patients")
            let patientID = try #require(caseload.body[0]["id"].string)
            let today = LocalDate(app.clock.now, in: vienna)
            let preview = try await therapist.send(
                .GET, "/patients/\(patientID)/schedule-preview?from=\(today.adding(days: 1))&days=13")
            #expect(preview.status == .ok)
            let daily = preview.body.array.filter { $0["instrumentKey"].string == "intersession-daily" }
            let byDay = Dictionary(grouping: daily) { String($0["localOpensAt"].string?.prefix(10) ?? "") }
            #expect(byDay.count == 13)
            for (day, prompts) in byDay {
                let starts = prompts.compactMap { $0["localOpensAt"].string?.suffix(5) }.sorted()
                #expect(starts.count == 3, "\(day)")
                guard starts.count == 3 else { continue }
                #expect(("08:00"..."11:59").contains(starts[0]) && ("12:00"..."15:59").contains(starts[1]))
                #expect(("16:00"..."19:59").contains(starts[2]))
                for prompt in prompts {
                    #expect(try date(prompt["closesAt"]).timeIntervalSince(try date(prompt["opensAt"])) == 30 * 60)
                }
            }

            let sessions = try await patient.send(.GET, "/me/appointments").body.array
            #expect(sessions.count == 2)
            let beforeSession = preview.body.array.filter { $0["instrumentKey"].string == "isf-k" }
            #expect(beforeSession.count == 2)
            for (session, prompt) in zip(sessions, beforeSession) {
                let start = try date(session["startsAt"])
                #expect(try date(prompt["opensAt"]) == start.addingTimeInterval(-86_400))
                #expect(try date(prompt["closesAt"]) == start)
            }

            // On the day before the first session the ISF-K is there to answer, next to the Daily of the moment.
            let opens = try date(beforeSession[0]["opensAt"])
            app.clock.advance(by: opens.timeIntervalSince(app.clock.now) + 60)
            _ = try await Planner(database: app.database, services: app.app.interlude).runAll(now: app.clock.now)
            let open = try await patient.send(.GET, "/me/prompts").body.array
            #expect(open.contains { $0["instrumentKey"].string == "isf-k" && $0["source"].string == "schedule" })
        }
    }

    @Test("track-your-stress: the one-time questionnaire first, then daily, weekly on Sunday and monthly on the 1st")
    func trackYourStress() async throws {
        try await withTestApp { app in
            let accounts = try await create(.trackYourStress, app)
            #expect(Set(accounts.map(\.role)) == [.therapist, .patient, .researcher])
            let patientAccount = try account(.patient, in: accounts)
            let researcherAccount = try account(.researcher, in: accounts)
            let patient = try await app.signIn(patientAccount.email, password: patientAccount.password)
            let researcher = try await app.signIn(researcherAccount.email, password: researcherAccount.password)
            let studies = try await patient.send(.GET, "/studies").body.array
            let study = try #require(studies.first { $0["title"].string == "Track Your Stress" })
            #expect(study["enrollment"]["status"].string == "active")

            // The one-time questionnaire is open at once; a daily prompt that opens waits for it.
            let planned = try await PromptRecord.query(on: app.database)
                .filter(\.$instrumentKey == "tys-daily").sort(\.$opensAt).all()
            let firstDaily = try #require(planned.first)
            app.clock.advance(by: max(0, firstDaily.opensAt.timeIntervalSince(app.clock.now)) + 60)
            let waiting = try await patient.send(.GET, "/me/prompts").body.array
            #expect(waiting.map { $0["instrumentKey"].string } == ["tys-baseline", "tys-daily"])
            #expect(waiting.first?["blocked"].isNull == true && waiting.last?["blocked"].bool == true)
            let dailyAnswers: JSONValue = [
                "stress": 40, "control": 60, "negative": 30, "positive": 20, "stressors": ["work"], "valence": 6,
                "arousal": 4, "importance": 50, "abilities": 70,
            ]
            #expect(try await answer(waiting[1], dailyAnswers, as: patient, at: app.clock.now) == .conflict)
            let baseline: JSONValue = [
                "ageGroup": "25-39", "occupation": "employed", "usualStress": 3, "mainSource": ["work"], "coping": 4,
            ]
            #expect(try await answer(waiting[0], baseline, as: patient, at: app.clock.now) == .created)
            let after = try await patient.send(.GET, "/me/prompts").body.array
            #expect(after.map { $0["instrumentKey"].string } == ["tys-daily"])
            #expect(try await answer(after[0], dailyAnswers, as: patient, at: app.clock.now) == .created)

            // The daily one may be adjusted within the study's bounds.
            let adjustable = try await patient.send(.GET, "/me/plan-adjustments").body.array
            #expect(adjustable.map { $0["instrumentKey"].string } == ["tys-daily"])
            #expect(adjustable.first?["bounds"]["maxCount"].int == 6)

            // Weekly on Sunday evening, monthly on the first, both 18:00 in Vienna; weekdays three, weekends two.
            let patientID = try #require(try await patient.send(.GET, "/me").body["id"].string)
            let today = LocalDate(app.clock.now, in: vienna)
            let preview = try await researcher.send(
                .GET, "/patients/\(patientID)/schedule-preview?from=\(today.adding(days: 1))&days=42")
            #expect(preview.status == .ok)
            let byInstrument = Dictionary(grouping: preview.body.array) { $0["instrumentKey"].string ?? "" }
            let sundays = byInstrument["tys-weekly"] ?? []
            #expect(sundays.count == 6)
            for prompt in sundays {
                let local = try #require(prompt["localOpensAt"].string)
                #expect(local.hasSuffix("T18:00"))
                #expect(LocalDate(String(local.prefix(10)))?.weekday == .sunday)
            }
            let monthly = byInstrument["pss-10"] ?? []
            #expect(!monthly.isEmpty && monthly.allSatisfy { $0["localOpensAt"].string?.hasSuffix("-01T18:00") == true })
            let daily = byInstrument["tys-daily"] ?? []
            for (day, prompts) in Dictionary(grouping: daily, by: { String($0["localOpensAt"].string?.prefix(10) ?? "") }) {
                let weekday = try #require(LocalDate(day)?.weekday)
                #expect(prompts.count == (weekday == .saturday || weekday == .sunday ? 2 : 3), "\(day)")
            }
        }
    }

    @Test("closing a study or leaving a practice takes back the future prompts; answered ones stay")
    func endingTakesBackFuturePrompts() async throws {
        try await withTestApp { app in
            let accounts = try await create(.trackYourStress, app)
            let patientAccount = try account(.patient, in: accounts)
            let researcherAccount = try account(.researcher, in: accounts)
            let patient = try await app.signIn(patientAccount.email, password: patientAccount.password)
            let researcher = try await app.signIn(researcherAccount.email, password: researcherAccount.password)
            let baseline = try #require(try await patient.send(.GET, "/me/prompts").body.array.first)
            let answers: JSONValue = [
                "ageGroup": "40-59", "occupation": "home", "usualStress": 5, "mainSource": ["family"], "coping": 2,
            ]
            #expect(try await answer(baseline, answers, as: patient, at: app.clock.now) == .created)
            let study = try #require(
                try await StudyRecord.query(on: app.database).filter(\.$title == "Track Your Stress").first())
            let before = try await PromptRecord.query(on: app.database).filter(\.$study.$id == study.id!).count()
            #expect(before > 40)
            let closed = try await researcher.send(
                .PUT, "/studies/\(study.id!)",
                json: [
                    "title": "Track Your Stress", "consentText": .string(study.consentText), "consentVersion": "1",
                    "joinMode": "open", "status": "closed",
                ])
            #expect(closed.status == .ok, "\(closed.text)")
            let left = try await PromptRecord.query(on: app.database).filter(\.$study.$id == study.id!).all()
            #expect(left.contains { $0.instrumentKey == "tys-baseline" && $0.status == PromptStatus.completed })
            #expect(left.allSatisfy { $0.opensAt <= app.clock.now })

            // Leaving the practice ends its plans the same way.
            let intersession = try await create(.intersession, app)
            let other = try account(.patient, in: intersession)
            let otherPatient = try await app.signIn(other.email, password: other.password)
            let otherID = try #require(UUID(uuidString: try await otherPatient.send(.GET, "/me").body["id"].string ?? ""))
            #expect(try await PromptRecord.query(on: app.database).filter(\.$patient.$id == otherID).count() > 40)
            let practice = try #require(
                try await EnrollmentRecord.query(on: app.database).filter(\.$patient.$id == otherID).first())
            let leave = try await otherPatient.send(.DELETE, "/studies/\(practice.$study.id)/enrollment")
            #expect(leave.status == .noContent, "\(leave.text)")
            let remaining = try await PromptRecord.query(on: app.database).filter(\.$patient.$id == otherID).all()
            #expect(remaining.allSatisfy { $0.opensAt <= app.clock.now })
        }
    }
}
