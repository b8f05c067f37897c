import Fluent
import Foundation
import InterludeCore
import SQLKit
import Testing
import VaporTesting

@testable import InterludeServer

@Suite("Schedules, planner and appointments")
struct ScheduleAPITests {
    static let dailyWindows: JSONValue = .array([
        ["start": "08:00", "end": "11:59", "count": 1], ["start": "12:00", "end": "15:59", "count": 1],
        ["start": "16:00", "end": "19:59", "count": 1],
    ])

    static var daily: JSONValue {
        var days: [String: JSONValue] = [:]
        for weekday in Weekday.allCases { days[weekday.rawValue] = dailyWindows }
        return ["instrumentKey": "intersession-daily", "durationMinutes": 30, "pattern": ["kind": "randomWindows", "days": .object(days)]]
    }

    static func iso(_ date: Date) -> JSONValue { QuestionnaireAPITests.iso(date) }

    /// A therapist and a paired patient in Vienna, with the therapist's practice id.
    func practice(_ app: TestContext) async throws -> (therapist: APIClient, patient: APIClient, patientID: UUID, practiceID: String) {
        let (therapist, therapistID) = try await app.staff("therapist", "berger@praxis.example")
        let (patient, patientID) = try await app.patient()
        try await app.pair(patient, with: therapist)
        let practice = try #require(
            try await StudyRecord.query(on: app.database).filter(\.$owner.$id == therapistID).first())
        return (therapist, patient, patientID, practice.id!.uuidString)
    }

    func prompts(_ app: TestContext, _ patientID: UUID) async throws -> [PromptRecord] {
        try await PromptRecord.query(on: app.database).filter(\.$patient.$id == patientID).sort(\.$opensAt).all()
    }

    @Test("the Intersession-Daily is planned 14 days ahead, three a day in their windows, and planning again adds nothing")
    func dailyPlanning() async throws {
        try await withTestApp { app in
            let (therapist, patient, patientID, practiceID) = try await practice(app)
            let created = try await therapist.send(.POST, "/studies/\(practiceID)/plans", json: Self.daily)
            #expect(created.status == .created, "\(created.text)")
            let planned = try await prompts(app, patientID)
            let vienna = TimeZone(identifier: "Europe/Vienna")!
            let byDay = Dictionary(grouping: planned) { LocalDate($0.opensAt, in: vienna) }
            let today = LocalDate(app.clock.now, in: vienna)
            for offset in 1...13 {
                let day = today.adding(days: offset)
                let opens = (byDay[day] ?? []).map { LocalDateTime($0.opensAt, in: vienna).time }.sorted()
                #expect(opens.count == 3, "\(day)")
                #expect(opens.count == 3 && opens[0] >= LocalTime("08:00")! && opens[0] <= LocalTime("11:59")!)
                #expect(opens.count == 3 && opens[2] >= LocalTime("16:00")! && opens[2] <= LocalTime("19:59")!)
            }
            #expect(planned.allSatisfy { $0.closesAt.timeIntervalSince($0.opensAt) == 1800 && $0.closesAt > app.clock.now })
            #expect(planned.allSatisfy { $0.instrumentVersion == 1 && $0.source == .schedule })
            let again = try await Planner(database: app.database, services: app.app.interlude).runAll(now: app.clock.now)
            #expect(again == Planner.Report())
            #expect(try await prompts(app, patientID).count == planned.count)

            // The patient sees what is open now, and nothing else.
            app.clock.advance(by: max(0, planned.first!.opensAt.timeIntervalSince(app.clock.now)) + 60)
            let open = try await patient.send(.GET, "/me/prompts")
            #expect(open.body.array.count == 1)
            #expect(open.body[0]["source"].string == "schedule")
        }
    }

    @Test("re-planning moves only future prompts nobody opened; open and completed ones stay, closed ones expire")
    func replanningTouchesNothingStarted() async throws {
        try await withTestApp { app in
            let (therapist, patient, patientID, practiceID) = try await practice(app)
            let created = try await therapist.send(.POST, "/studies/\(practiceID)/plans", json: Self.daily)
            let planID = try #require(created.body["id"].string)
            var planned = try await prompts(app, patientID)
            // Complete the first, open (but not answer) the second.
            let first = planned[0]
            app.clock.advance(by: max(0, first.opensAt.timeIntervalSince(app.clock.now)) + 60)
            let submitted = try await patient.send(
                .POST, "/me/responses",
                json: ["id": .string(UUID().uuidString), "promptId": .string(first.id!.uuidString), "instrumentKey": "intersession-daily",
                    "version": 1, "answers": ["thought": false], "completedAt": Self.iso(app.clock.now)])
            #expect(submitted.status == .created, "\(submitted.text)")
            let second = planned[1]
            app.clock.advance(by: max(0, second.opensAt.timeIntervalSince(app.clock.now)) + 60)
            _ = try await patient.send(.GET, "/me/prompts/\(second.id!.uuidString)")

            // Narrow the windows: everything not yet started moves inside the new ones.
            var narrow: [String: JSONValue] = [:]
            for weekday in Weekday.allCases {
                narrow[weekday.rawValue] = .array([["start": "20:00", "end": "21:59", "count": 1]])
            }
            let changed = try await therapist.send(
                .PATCH, "/plans/\(planID)",
                json: ["instrumentKey": "intersession-daily", "durationMinutes": 30, "pattern": ["kind": "randomWindows", "days": .object(narrow)]])
            #expect(changed.status == .ok, "\(changed.text)")
            planned = try await prompts(app, patientID)
            let vienna = TimeZone(identifier: "Europe/Vienna")!
            let kept = planned.filter { $0.id == first.id || $0.id == second.id }
            #expect(kept.count == 2)
            #expect(kept.first { $0.id == first.id }?.status == .completed)
            #expect(kept.first { $0.id == second.id }?.opensAt == second.opensAt)
            for prompt in planned where prompt.opensAt > app.clock.now {
                let time = LocalDateTime(prompt.opensAt, in: vienna).time
                #expect(time >= LocalTime("20:00")! && time <= LocalTime("21:59")!)
            }

            // Once the second one's window closed unanswered, it expires.
            app.clock.advance(by: 3600)
            let report = try await Planner(database: app.database, services: app.app.interlude).runAll(now: app.clock.now)
            #expect(report.expired >= 1)
            #expect(try await PromptRecord.find(second.id, on: app.database)?.status == .expired)

            // Deleting the plan removes what lies ahead but keeps what happened.
            #expect(try await therapist.send(.DELETE, "/plans/\(planID)").status == .noContent)
            let left = try await prompts(app, patientID)
            #expect(Set([first.id, second.id]).isSubset(of: Set(left.map(\.id))))
            #expect(left.allSatisfy { $0.opensAt <= app.clock.now })
        }
    }

    @Test("a prompt around each appointment follows the appointment when it moves or goes")
    func appointmentPrompts() async throws {
        try await withTestApp { app in
            let (therapist, patient, patientID, practiceID) = try await practice(app)
            let plan: JSONValue = [
                "instrumentKey": "isf-k", "durationMinutes": 60,
                "pattern": ["kind": "appointment", "opensBeforeMinutes": 1440, "closesAfterStartMinutes": 0],
            ]
            #expect(try await therapist.send(.POST, "/studies/\(practiceID)/plans", json: plan).status == .created)
            let start = app.clock.now.addingTimeInterval(3 * 86_400)
            let created = try await patient.send(
                .POST, "/me/appointments",
                json: ["title": "Session", "startsAt": Self.iso(start), "endsAt": Self.iso(start.addingTimeInterval(3000))])
            #expect(created.status == .created, "\(created.text)")
            let appointmentID = try #require(created.body["id"].string)
            var planned = try await prompts(app, patientID)
            #expect(planned.count == 1)
            #expect(planned.first?.opensAt == start.addingTimeInterval(-86_400))
            #expect(planned.first?.closesAt == start)
            #expect(planned.first?.instrumentKey == "isf-k")

            let later = start.addingTimeInterval(2 * 86_400)
            let moved = try await patient.send(
                .PATCH, "/me/appointments/\(appointmentID)",
                json: ["title": "Session", "startsAt": Self.iso(later), "endsAt": Self.iso(later.addingTimeInterval(3000))])
            #expect(moved.body["version"].int == 2)
            planned = try await prompts(app, patientID)
            #expect(planned.count == 1)
            #expect(planned.first?.closesAt == later)

            #expect(try await patient.send(.DELETE, "/me/appointments/\(appointmentID)").status == .noContent)
            #expect(try await prompts(app, patientID).isEmpty)
        }
    }

    @Test("appointments: end before start, 3 minutes, an off-grid minute and an empty title are refused")
    func appointmentValidation() async throws {
        try await withTestApp { app in
            let (therapist, patient, patientID, _) = try await practice(app)
            let base = app.clock.now.addingTimeInterval(86_400)
            let cases: [(JSONValue, String)] = [
                (["title": "Session", "startsAt": Self.iso(base), "endsAt": Self.iso(base.addingTimeInterval(-600))], "endsAt"),
                (["title": "Session", "startsAt": Self.iso(base), "endsAt": Self.iso(base.addingTimeInterval(180))], "endsAt"),
                (["title": "Session", "startsAt": Self.iso(base.addingTimeInterval(60)), "endsAt": Self.iso(base.addingTimeInterval(3600))], "startsAt"),
                (["title": " ", "startsAt": Self.iso(base), "endsAt": Self.iso(base.addingTimeInterval(3000))], "title"),
                (["title": .string(String(repeating: "t", count: 201)), "startsAt": Self.iso(base), "endsAt": Self.iso(base.addingTimeInterval(3000))], "title"),
            ]
            for (body, field) in cases {
                let reply = try await patient.send(.POST, "/me/appointments", json: body)
                #expect(reply.status == .unprocessableEntity, "\(reply.text)")
                #expect(reply.body.problemFields.contains(field), "\(reply.text)")
            }
            #expect(try await app.count("appointments") == 0)

            // The therapist adds one and sees it; another therapist does not.
            let added = try await therapist.send(
                .POST, "/patients/\(patientID.uuidString)/appointments",
                json: ["title": "Sitzung", "startsAt": Self.iso(base), "endsAt": Self.iso(base.addingTimeInterval(3000)), "comment": "Room 2"])
            #expect(added.status == .created)
            #expect(try await patient.send(.GET, "/me/appointments").body[0]["comment"].string == "Room 2")
            let (other, _) = try await app.staff("therapist", "huber@praxis.example")
            #expect(try await other.send(.GET, "/patients/\(patientID.uuidString)/appointments").status == .notFound)
            #expect(try await therapist.send(.GET, "/patients/\(patientID.uuidString)/appointments").body.array.count == 1)
            let stored = try #require(try await app.sql.raw("SELECT title FROM appointments").first()?.decode(column: "title", as: String.self))
            #expect(stored.hasPrefix("v1:"))

            // Past ones are hidden unless asked for.
            app.clock.advance(by: 3 * 86_400)
            #expect(try await patient.send(.GET, "/me/appointments").body.array.isEmpty)
            #expect(try await patient.send(.GET, "/me/appointments?includePast=true").body.array.count == 1)
        }
    }

    @Test("the private calendar feed lists appointments, and a revoked address stops working")
    func calendarFeed() async throws {
        try await withTestApp { app in
            let (_, patient, _, _) = try await practice(app)
            let start = app.clock.now.addingTimeInterval(86_400)
            _ = try await patient.send(
                .POST, "/me/appointments",
                json: ["title": "Session, with Dr. Berger; room 2", "startsAt": Self.iso(start), "endsAt": Self.iso(start.addingTimeInterval(3000))])
            let feed = try await patient.send(.GET, "/me/calendar-feed")
            let url = try #require(feed.body["url"].string)
            #expect(url.hasPrefix("https://interlude.test/calendar/") && url.hasSuffix(".ics"))
            #expect(try await patient.send(.GET, "/me/calendar-feed").body["url"].string == url)
            let path = String(url.dropFirst("https://interlude.test".count))
            try await app.app.testing().test(.GET, path) { response in
                #expect(response.status == .ok)
                #expect(response.headers.contentType?.subType == "calendar")
                #expect(response.body.string.contains("BEGIN:VEVENT"))
                #expect(response.body.string.contains("SUMMARY:Session\\, with Dr. Berger\\; room 2"))
                #expect(response.body.string.contains("\r\n"))
            }
            #expect(try await patient.send(.DELETE, "/me/calendar-feed").status == .noContent)
            try await app.app.testing().test(.GET, path) { response in
                #expect(response.status == .notFound)
            }
            #expect(try await patient.send(.GET, "/me/calendar-feed").body["url"].string != url)
        }
    }

    @Test("participants adjust windows inside the plan's bounds; outside them is refused")
    func adjustments() async throws {
        try await withTestApp { app in
            let (therapist, patient, patientID, practiceID) = try await practice(app)
            var plan = Self.daily
            if case .object(var fields) = plan {
                fields["adjustment"] = ["earliest": "07:00", "latest": "21:00", "minCount": 1, "maxCount": 4]
                plan = .object(fields)
            }
            let created = try await therapist.send(.POST, "/studies/\(practiceID)/plans", json: plan)
            let planID = try #require(created.body["id"].string)
            let list = try await patient.send(.GET, "/me/plan-adjustments")
            #expect(list.body.array.count == 1)
            #expect(list.body[0]["bounds"]["maxCount"].int == 4)
            #expect(list.body[0]["title"].string == "Intersession Daily")

            var days: [String: JSONValue] = [:]
            for weekday in Weekday.allCases { days[weekday.rawValue] = .array([["start": "18:00", "end": "20:59", "count": 2]]) }
            let set = try await patient.send(.PUT, "/me/plan-adjustments", json: ["planId": .string(planID), "adjustment": ["days": .object(days)]])
            #expect(set.status == .ok, "\(set.text)")
            let vienna = TimeZone(identifier: "Europe/Vienna")!
            let planned = try await prompts(app, patientID).filter { $0.opensAt > app.clock.now.addingTimeInterval(86_400) }
            #expect(!planned.isEmpty)
            for prompt in planned {
                let time = LocalDateTime(prompt.opensAt, in: vienna).time
                #expect(time >= LocalTime("18:00")! && time <= LocalTime("20:59")!)
            }
            days["monday"] = .array([["start": "05:00", "end": "09:00", "count": 1]])
            let early = try await patient.send(.PUT, "/me/plan-adjustments", json: ["planId": .string(planID), "adjustment": ["days": .object(days)]])
            #expect(early.status == .unprocessableEntity)
            #expect(early.body.problemFields.contains("days.monday.0"))
            let reset = try await patient.send(.PUT, "/me/plan-adjustments", json: ["planId": .string(planID)])
            #expect(reset.status == .ok)
            #expect(reset.body["adjustment"].isNull)
        }
    }

    @Test("a one-time questionnaire comes first; repeated ones wait until it is answered")
    func oneTimeFirst() async throws {
        try await withTestApp { app in
            let (therapist, patient, patientID, practiceID) = try await practice(app)
            _ = try await therapist.send(
                .POST, "/studies/\(practiceID)/plans", json: ["instrumentKey": "who-5", "durationMinutes": 10080, "pattern": ["kind": "once"]])
            _ = try await therapist.send(
                .POST, "/studies/\(practiceID)/plans",
                json: ["instrumentKey": "mood-vas", "durationMinutes": 600, "pattern": ["kind": "fixedTimes", "times": ["08:30"]]])
            let open = try await patient.send(.GET, "/me/prompts")
            #expect(open.body.array.map { $0["instrumentKey"].string } == ["who-5", "mood-vas"])
            #expect(open.body[1]["blocked"].bool == true)
            let moodID = try #require(open.body[1]["id"].string)
            let blocked = try await patient.send(
                .POST, "/me/responses",
                json: ["id": .string(UUID().uuidString), "promptId": .string(moodID), "instrumentKey": "mood-vas", "version": 1,
                    "answers": ["mood": 50], "completedAt": Self.iso(app.clock.now)])
            #expect(blocked.status == .conflict)
            #expect(blocked.body["type"].string == "/problems/one-time-first")
            let whoID = try #require(open.body[0]["id"].string)
            let answers: JSONValue = .object(Dictionary(uniqueKeysWithValues: (1...5).map { ("who5_\($0)", JSONValue.string("3")) }))
            let first = try await patient.send(
                .POST, "/me/responses",
                json: ["id": .string(UUID().uuidString), "promptId": .string(whoID), "instrumentKey": "who-5", "version": 1,
                    "answers": answers, "completedAt": Self.iso(app.clock.now)])
            #expect(first.status == .created)
            #expect(try await patient.send(.GET, "/me/prompts").body[0]["blocked"].isNull)
            let once = try await prompts(app, patientID).filter { $0.occurrence == "once" }
            #expect(once.count == 1)
        }
    }

    @Test("on-demand plans open a prompt when the participant asks; other plans refuse")
    func onDemand() async throws {
        try await withTestApp { app in
            let (therapist, patient, _, practiceID) = try await practice(app)
            let created = try await therapist.send(
                .POST, "/studies/\(practiceID)/plans", json: ["instrumentKey": "mood-vas", "durationMinutes": 60, "pattern": ["kind": "onDemand"]])
            let planID = try #require(created.body["id"].string)
            let offered = try await patient.send(.GET, "/me/on-demand-prompts")
            #expect(offered.body.array.map { $0["planId"].string } == [planID])
            #expect(offered.body[0]["title"].string?.isEmpty == false)
            let started = try await patient.send(.POST, "/me/on-demand-prompts", json: ["planId": .string(planID)])
            #expect(started.status == .created)
            #expect(started.body["status"].string == "open")
            #expect(started.body["source"].string == "onDemand")
            let daily = try await therapist.send(.POST, "/studies/\(practiceID)/plans", json: Self.daily)
            let refused = try await patient.send(.POST, "/me/on-demand-prompts", json: ["planId": .string(daily.body["id"].string ?? "")])
            #expect(refused.status == .unprocessableEntity)
            #expect(try await patient.send(.GET, "/me/on-demand-prompts").body.array.count == 1)
            let (stranger, _) = try await app.patient("stranger@example.org")
            #expect(try await stranger.send(.GET, "/me/on-demand-prompts").body.array.isEmpty)
            let foreign = try await stranger.send(.POST, "/me/on-demand-prompts", json: ["planId": .string(planID)])
            #expect(foreign.status == .unprocessableEntity)
        }
    }

    @Test("the preview shows any period, across the spring change, without storing anything")
    func preview() async throws {
        try await withTestApp { app in
            let (therapist, _, patientID, practiceID) = try await practice(app)
            let plan: JSONValue = [
                "instrumentKey": "mood-vas", "durationMinutes": 30,
                "pattern": ["kind": "fixedTimes", "times": ["02:30", "09:00"]],
            ]
            _ = try await therapist.send(.POST, "/studies/\(practiceID)/plans", json: plan)
            let before = try await app.count("prompts")
            let reply = try await therapist.send(.GET, "/patients/\(patientID.uuidString)/schedule-preview?from=2026-03-28&days=3")
            #expect(reply.status == .ok, "\(reply.text)")
            let items = reply.body.array
            #expect(items.count == 6)
            #expect(items.allSatisfy { $0["timeZone"].string == "Europe/Vienna" })
            let locals = items.compactMap { $0["localOpensAt"].string }
            #expect(locals == ["2026-03-28T02:30", "2026-03-28T09:00", "2026-03-29T03:30", "2026-03-29T09:00", "2026-03-30T02:30", "2026-03-30T09:00"])
            #expect(items[2]["opensAt"].string == "2026-03-29T01:30:00Z")
            #expect(try await app.count("prompts") == before)
            let (other, _) = try await app.staff("therapist", "huber@praxis.example")
            #expect(try await other.send(.GET, "/patients/\(patientID.uuidString)/schedule-preview?from=2026-03-28").status == .notFound)
            #expect(try await therapist.send(.GET, "/patients/\(patientID.uuidString)/schedule-preview?from=28.03.2026").status == .unprocessableEntity)
        }
    }

    @Test("a new time zone re-plans the future in the new local time")
    func timeZoneChange() async throws {
        try await withTestApp { app in
            let (therapist, patient, patientID, practiceID) = try await practice(app)
            _ = try await therapist.send(
                .POST, "/studies/\(practiceID)/plans",
                json: ["instrumentKey": "mood-vas", "durationMinutes": 30, "pattern": ["kind": "fixedTimes", "times": ["20:00"]]])
            _ = try await patient.send(.PATCH, "/me", json: ["timeZone": "America/New_York"])
            let newYork = TimeZone(identifier: "America/New_York")!
            let planned = try await prompts(app, patientID)
            #expect(!planned.isEmpty)
            #expect(planned.allSatisfy { LocalDateTime($0.opensAt, in: newYork).time == LocalTime("20:00")! })
        }
    }

    @Test("plans need a study's staff; they are checked like any input")
    func planAccess() async throws {
        try await withTestApp { app in
            let (_, patient, _, practiceID) = try await practice(app)
            let (other, _) = try await app.staff("therapist", "huber@praxis.example")
            #expect(try await other.send(.POST, "/studies/\(practiceID)/plans", json: Self.daily).status == .notFound)
            #expect(try await other.send(.GET, "/studies/\(practiceID)/plans").status == .notFound)
            #expect(try await patient.send(.POST, "/studies/\(practiceID)/plans", json: Self.daily).status == .forbidden)
            let (therapist) = try await app.signIn("berger@praxis.example")
            let badTime = try await therapist.send(
                .POST, "/studies/\(practiceID)/plans",
                json: ["instrumentKey": "mood-vas", "durationMinutes": 30, "pattern": ["kind": "fixedTimes", "times": ["25:00"]]])
            #expect(badTime.status == .unprocessableEntity)
            #expect(badTime.body.problemFields == ["pattern.times.0"])
            let unknown = try await therapist.send(
                .POST, "/studies/\(practiceID)/plans",
                json: ["instrumentKey": "nope", "durationMinutes": 30, "pattern": ["kind": "once"]])
            #expect(unknown.body.problemFields == ["instrumentKey"])
            let overlapping = try await therapist.send(
                .POST, "/studies/\(practiceID)/plans",
                json: ["instrumentKey": "mood-vas", "durationMinutes": 60, "pattern": ["kind": "fixedTimes", "times": ["09:00", "09:30"]]])
            #expect(overlapping.body.problemFields == ["pattern.times"])
            #expect(try await app.count("plans") == 0)
        }
    }

    @Test("arms: participants are assigned in turn, and a plan for one arm reaches only that arm")
    func arms() async throws {
        try await withTestApp { app in
            let (researcher, _) = try await app.staff("researcher", "lab@uni.example")
            var study = StudyAPITests.study("open")
            if case .object(var fields) = study {
                fields["arms"] = ["app", "control"]
                fields["allocation"] = "alternating"
                study = .object(fields)
            }
            let created = try await researcher.send(.POST, "/studies", json: study)
            let studyID = try #require(created.body["id"].string)
            #expect(created.body["arms"].array.count == 2)
            let (first, firstID) = try await app.patient("first@example.org")
            let (second, secondID) = try await app.patient("second@example.org")
            _ = try await first.send(.POST, "/studies/\(studyID)/enrollment", json: ["consentVersion": "2026-1"])
            _ = try await second.send(.POST, "/studies/\(studyID)/enrollment", json: ["consentVersion": "2026-1"])
            let arms = try await EnrollmentRecord.query(on: app.database).sort(\.$createdAt).all().map(\.arm)
            #expect(arms == ["app", "control"])
            let plan: JSONValue = [
                "instrumentKey": "mood-vas", "durationMinutes": 30, "arm": "app",
                "pattern": ["kind": "fixedTimes", "times": ["20:00"]],
            ]
            #expect(try await researcher.send(.POST, "/studies/\(studyID)/plans", json: plan).status == .created)
            #expect(try await prompts(app, firstID).count > 0)
            #expect(try await prompts(app, secondID).isEmpty)
            let badArm: JSONValue = ["instrumentKey": "mood-vas", "durationMinutes": 30, "arm": "other", "pattern": ["kind": "once"]]
            #expect(try await researcher.send(.POST, "/studies/\(studyID)/plans", json: badArm).body.problemFields == ["arm"])
        }
    }

    @Test(
        "two server processes planning at once on one PostgreSQL create every prompt exactly once",
        .enabled(if: TestDatabase.postgresURL != nil))
    func twoProcesses() async throws {
        try await withTestApp { app in
            let (therapist, _, patientID, practiceID) = try await practice(app)
            for index in 0..<5 {
                let (extra, _) = try await app.patient("extra\(index)@example.org")
                try await app.pair(extra, with: therapist)
            }
            // The plan is stored without planning, so both processes start from nothing.
            let plan = try JSONDecoder().decode(
                SchedulePlan.self, from: JSONEncoder().encode(Self.daily))
            let therapistID = try #require(try await UserRecord.query(on: app.database).filter(\.$email == "berger@praxis.example").first()?.id)
            try await PlanRecord(
                studyID: UUID(uuidString: practiceID)!, patientID: nil, arm: nil, createdBy: therapistID,
                instrumentKey: "intersession-daily", definition: ScheduleService.encode(plan), now: app.clock.now
            ).create(on: app.database)
            let twin = try await app.twin()
            let now = app.clock.now
            async let one = Planner(database: app.database, services: app.app.interlude).run(now: now, patients: Set(try await allPatients(app)))
            async let two = Planner(database: twin.db, services: app.app.interlude).run(now: now, patients: Set(try await allPatients(app)))
            let reports = try await [one, two]
            try await twin.asyncShutdown()
            let total = try await app.count("prompts")
            #expect(reports[0].created + reports[1].created == total)
            let duplicates = try await app.sql.raw(
                "SELECT patient_id, occurrence, COUNT(*) AS n FROM prompts GROUP BY patient_id, occurrence HAVING COUNT(*) > 1"
            ).all()
            #expect(duplicates.isEmpty)
            #expect(try await prompts(app, patientID).count >= 39)
            let again = try await Planner(database: app.database, services: app.app.interlude).runAll(now: now)
            #expect(again.created == 0)
        }
    }

    @Test(
        "while one process plans on PostgreSQL, a second process's planner run waits its turn and creates nothing",
        .enabled(if: TestDatabase.postgresURL != nil))
    func plannerRunsInOneProcessAtATime() async throws {
        try await withTestApp { app in
            let (therapist, _, patientID, practiceID) = try await practice(app)
            let plan = try JSONDecoder().decode(SchedulePlan.self, from: JSONEncoder().encode(Self.daily))
            let therapistID = try #require(try await UserRecord.query(on: app.database).filter(\.$email == "berger@praxis.example").first()?.id)
            _ = therapist
            try await PlanRecord(
                studyID: UUID(uuidString: practiceID)!, patientID: nil, arm: nil, createdBy: therapistID,
                instrumentKey: "intersession-daily", definition: ScheduleService.encode(plan), now: app.clock.now
            ).create(on: app.database)
            let twin = try await app.twin()
            let now = app.clock.now
            // The first process holds the planner's lock for the length of its run.
            try await app.database.transaction { holder in
                #expect(try await Planner.tryLock(on: holder as! any SQLDatabase))
                let skipped = try await Planner(database: twin.db, services: app.app.interlude).runAll(now: now)
                #expect(skipped == Planner.Report())
            }
            let planned = try await Planner(database: twin.db, services: app.app.interlude).runAll(now: now)
            try await twin.asyncShutdown()
            #expect(planned.created >= 39)
            #expect(try await prompts(app, patientID).count == planned.created)
        }
    }

    func allPatients(_ app: TestContext) async throws -> [UUID] {
        try await UserRecord.query(on: app.database).filter(\.$role == Role.patient).all().compactMap(\.id)
    }
}
