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

    static var daily: JSONValue { plan(days: dailyWindows) }

    /// The Intersession-Daily with the same windows on every weekday.
    static func plan(days windows: JSONValue) -> JSONValue {
        [
            "instrumentKey": "intersession-daily", "durationMinutes": 30,
            "pattern": ["kind": "randomWindows", "days": everyDay(windows)],
        ]
    }

    static func everyDay(_ windows: JSONValue) -> JSONValue {
        .object(Dictionary(uniqueKeysWithValues: Weekday.allCases.map { ($0.rawValue, windows) }))
    }

    static func fixedTimes(_ times: [String], instrument: String = "mood-vas", minutes: Int = 30) -> JSONValue {
        [
            "instrumentKey": .string(instrument), "durationMinutes": .int(minutes),
            "pattern": ["kind": "fixedTimes", "times": .array(times.map(JSONValue.string))],
        ]
    }

    static let appointmentPlan: JSONValue = [
        "instrumentKey": "isf-k", "durationMinutes": 60,
        "pattern": ["kind": "appointment", "opensBeforeMinutes": 1440, "closesAfterStartMinutes": 0],
    ]

    static func iso(_ date: Date) -> JSONValue { QuestionnaireAPITests.iso(date) }

    static func appointment(_ title: String, at start: Date, minutes: Double = 50) -> JSONValue {
        ["title": .string(title), "startsAt": iso(start), "endsAt": iso(start.addingTimeInterval(minutes * 60))]
    }

    static let vienna = TimeZone(identifier: "Europe/Vienna")!

    /// A therapist and a paired patient in Vienna, with the therapist's practice id.
    func practice(_ app: TestContext) async throws -> (
        therapist: APIClient, patient: APIClient, patientID: UUID, practiceID: String
    ) {
        let (therapist, therapistID) = try await app.staff("therapist", "berger@praxis.example")
        let (patient, patientID) = try await app.patient()
        try await app.pair(patient, with: therapist)
        let practice = try #require(
            try await StudyRecord.query(on: app.database).filter(\.$owner.$id == therapistID).first())
        return (therapist, patient, patientID, practice.id!.uuidString)
    }

    /// Creates a plan in the practice and answers its id.
    func createPlan(_ plan: JSONValue, by staff: APIClient, in studyID: String) async throws -> String {
        let created = try await staff.send(.POST, "/studies/\(studyID)/plans", json: plan)
        try #require(created.status == .created, "\(created.text)")
        return try created.decoded(Components.Schemas.Plan.self).id
    }

    func prompts(_ app: TestContext, _ patientID: UUID) async throws -> [PromptRecord] {
        try await PromptRecord.query(on: app.database).filter(\.$patient.$id == patientID).sort(\.$opensAt).all()
    }

    /// The patient's prompts that open after now: one the clock is moved to stays open for its whole half hour.
    func promptsAhead(_ app: TestContext, _ patientID: UUID) async throws -> [PromptRecord] {
        try await prompts(app, patientID).filter { $0.opensAt > app.clock.now }
    }

    func submit(_ prompt: PromptRecord, answers: JSONValue, by patient: APIClient, at now: Date) async throws
        -> APIClient.Reply
    {
        try await patient.send(
            .POST, "/me/responses",
            json: [
                "id": .string(UUID().uuidString), "promptId": .string(prompt.id!.uuidString),
                "instrumentKey": .string(prompt.instrumentKey),
                "version": .int(prompt.instrumentVersion), "answers": answers, "completedAt": Self.iso(now),
            ])
    }

    func allPatients(_ app: TestContext) async throws -> [UUID] {
        try await UserRecord.query(on: app.database).filter(\.$role == Role.patient).all().compactMap(\.id)
    }

    /// Stores the Daily in the practice without planning, so planner runs start from nothing.
    func storeDailyUnplanned(_ app: TestContext, in practiceID: String) async throws {
        let plan = try JSONDecoder().decode(SchedulePlan.self, from: JSONEncoder().encode(Self.daily))
        let therapistID = try #require(
            try await UserRecord.query(on: app.database).filter(\.$email == "berger@praxis.example").first()?.id)
        try await PlanRecord(
            studyID: UUID(uuidString: practiceID)!, patientID: nil, arm: nil, createdBy: therapistID,
            instrumentKey: "intersession-daily", definition: ScheduleService.encode(plan), now: app.clock.now
        ).create(on: app.database)
    }

    // MARK: Planning

    @Test("the Intersession-Daily is planned 14 days ahead, three half-hour prompts a day inside their windows")
    func dailyPlanning() async throws {
        try await withTestApp { app in
            // setup
            let (therapist, _, patientID, practiceID) = try await practice(app)

            // act
            _ = try await createPlan(Self.daily, by: therapist, in: practiceID)

            // verify
            let planned = try await prompts(app, patientID)
            let byDay = Dictionary(grouping: planned) { LocalDate($0.opensAt, in: Self.vienna) }
            let today = LocalDate(app.clock.now, in: Self.vienna)
            for offset in 1...13 {
                let day = today.adding(days: offset)
                let opens = (byDay[day] ?? []).map { LocalDateTime($0.opensAt, in: Self.vienna).time }.sorted()
                try #require(opens.count == 3, "\(day)")
                #expect(opens[0] >= LocalTime("08:00")! && opens[0] <= LocalTime("11:59")!)
                #expect(opens[1] >= LocalTime("12:00")! && opens[1] <= LocalTime("15:59")!)
                #expect(opens[2] >= LocalTime("16:00")! && opens[2] <= LocalTime("19:59")!)
            }
            #expect(
                planned.allSatisfy { $0.closesAt.timeIntervalSince($0.opensAt) == 1800 && $0.closesAt > app.clock.now })
            #expect(planned.allSatisfy { $0.instrumentVersion == 1 && $0.source == .schedule })
        }
    }

    @Test("planning again creates, moves and removes nothing")
    func planningAgain() async throws {
        try await withTestApp { app in
            // setup
            let (therapist, _, patientID, practiceID) = try await practice(app)
            _ = try await createPlan(Self.daily, by: therapist, in: practiceID)
            let planned = try await prompts(app, patientID)

            // act
            let again = try await Planner(database: app.database, services: app.app.interlude).runAll(
                now: app.clock.now)

            // verify
            #expect(again == Planner.Report())
            #expect(try await prompts(app, patientID).map(\.id) == planned.map(\.id))
        }
    }

    @Test("the planning horizon an operator sets also bounds the planning a new plan starts")
    func configuredHorizon() async throws {
        try await withTestApp(settings: { $0.plannerHorizonDays = 3 }) { app in
            // setup
            let (therapist, _, patientID, practiceID) = try await practice(app)

            // act
            _ = try await createPlan(Self.daily, by: therapist, in: practiceID)

            // verify
            let planned = try await prompts(app, patientID)
            #expect(!planned.isEmpty)
            #expect(planned.allSatisfy { $0.opensAt < app.clock.now.addingTimeInterval(3 * 86_400) })
        }
    }

    @Test("the patient sees the prompt open now, and none of those still ahead")
    func onlyOpenPromptsShown() async throws {
        try await withTestApp { app in
            // setup
            let (therapist, patient, patientID, practiceID) = try await practice(app)
            _ = try await createPlan(Self.daily, by: therapist, in: practiceID)
            let first = try #require(try await promptsAhead(app, patientID).first)
            app.clock.advance(by: max(0, first.opensAt.timeIntervalSince(app.clock.now)) + 60)

            // act
            let open = try await patient.send(.GET, "/me/prompts").decoded([Components.Schemas.Prompt].self)

            // verify
            #expect(open.map { UUID(uuidString: $0.id) } == [first.id])
            #expect(open.first?.source == .schedule)
            #expect(open.first?.status == .open)
        }
    }

    @Test("changing a plan moves only future prompts nobody opened; opened and completed ones stay where they were")
    func replanningTouchesNothingStarted() async throws {
        try await withTestApp { app in
            // setup: the first prompt answered, the second opened but not answered
            let (therapist, patient, patientID, practiceID) = try await practice(app)
            let planID = try await createPlan(Self.daily, by: therapist, in: practiceID)
            let planned = try await promptsAhead(app, patientID)
            let (first, second) = (planned[0], planned[1])
            app.clock.advance(by: max(0, first.opensAt.timeIntervalSince(app.clock.now)) + 60)
            let submitted = try await submit(first, answers: ["thought": false], by: patient, at: app.clock.now)
            try #require(submitted.status == .created, "\(submitted.text)")
            app.clock.advance(by: max(0, second.opensAt.timeIntervalSince(app.clock.now)) + 60)
            _ = try await patient.send(.GET, "/me/prompts/\(second.id!.uuidString)")

            // act: narrow the windows to the evening
            let narrow = Self.plan(days: [["start": "20:00", "end": "21:59", "count": 1]])
            let changed = try await therapist.send(.PATCH, "/plans/\(planID)", json: narrow)

            // verify
            #expect(changed.status == .ok, "\(changed.text)")
            let after = try await prompts(app, patientID)
            #expect(after.first { $0.id == first.id }?.status == .completed)
            #expect(after.first { $0.id == second.id }?.opensAt == second.opensAt)
            let ahead = after.filter { $0.opensAt > app.clock.now }
            #expect(!ahead.isEmpty)
            #expect(
                ahead.allSatisfy {
                    let time = LocalDateTime($0.opensAt, in: Self.vienna).time
                    return time >= LocalTime("20:00")! && time <= LocalTime("21:59")!
                })
        }
    }

    @Test("a prompt whose window closed unanswered expires at the next planner run")
    func unansweredPromptsExpire() async throws {
        try await withTestApp { app in
            // setup: the first prompt opened, then its window passed
            let (therapist, patient, patientID, practiceID) = try await practice(app)
            _ = try await createPlan(Self.daily, by: therapist, in: practiceID)
            let first = try #require(try await promptsAhead(app, patientID).first)
            app.clock.advance(by: max(0, first.opensAt.timeIntervalSince(app.clock.now)) + 60)
            _ = try await patient.send(.GET, "/me/prompts/\(first.id!.uuidString)")
            app.clock.advance(by: 3600)

            // act
            let report = try await Planner(database: app.database, services: app.app.interlude).runAll(
                now: app.clock.now)

            // verify
            #expect(report.expired >= 1)
            #expect(try await PromptRecord.find(first.id, on: app.database)?.status == .expired)
        }
    }

    @Test("deleting a plan removes the prompts ahead and keeps what happened")
    func deletingPlan() async throws {
        try await withTestApp { app in
            // setup: the first prompt answered
            let (therapist, patient, patientID, practiceID) = try await practice(app)
            let planID = try await createPlan(Self.daily, by: therapist, in: practiceID)
            let first = try #require(try await promptsAhead(app, patientID).first)
            app.clock.advance(by: max(0, first.opensAt.timeIntervalSince(app.clock.now)) + 60)
            _ = try await submit(first, answers: ["thought": false], by: patient, at: app.clock.now)

            // act
            let deleted = try await therapist.send(.DELETE, "/plans/\(planID)")

            // verify
            #expect(deleted.status == .noContent)
            let left = try await prompts(app, patientID)
            #expect(left.first { $0.id == first.id }?.status == .completed)
            #expect(!left.isEmpty && left.allSatisfy { $0.opensAt <= app.clock.now })
        }
    }

    @Test(
        "a deactivated questionnaire stays listed, marked inactive, and cannot be filled; nothing ahead is planned until it is active again"
    )
    func deactivation() async throws {
        try await withTestApp { app in
            // setup: the first Daily is open, two weeks more are planned
            let (therapist, patient, patientID, practiceID) = try await practice(app)
            let planID = try await createPlan(Self.daily, by: therapist, in: practiceID)
            let first = try #require(try await promptsAhead(app, patientID).first)
            app.clock.advance(by: max(0, first.opensAt.timeIntervalSince(app.clock.now)) + 60)
            let responsesBefore = try await app.count("responses")

            // act
            let deactivated = try await therapist.send(.POST, "/plans/\(planID)/deactivation")
            let again = try await therapist.send(.POST, "/plans/\(planID)/deactivation")
            let listed = try await patient.send(.GET, "/me/prompts").decoded([Components.Schemas.Prompt].self)
            let refused = try await submit(first, answers: ["thought": false], by: patient, at: app.clock.now)
            _ = try await Planner(database: app.database, services: app.app.interlude).runAll(now: app.clock.now)
            let aheadWhileInactive = try await promptsAhead(app, patientID)
            let reactivated = try await therapist.send(.DELETE, "/plans/\(planID)/deactivation")
            let listedAfter = try await patient.send(.GET, "/me/prompts").decoded([Components.Schemas.Prompt].self)
            let accepted = try await submit(first, answers: ["thought": false], by: patient, at: app.clock.now)

            // verify
            #expect(deactivated.status == .ok)
            #expect(deactivated.body["deactivatedAt"].string != nil)
            #expect(
                again.body["deactivatedAt"].string == deactivated.body["deactivatedAt"].string,
                "deactivating twice changes nothing")
            #expect(listed.map { UUID(uuidString: $0.id) } == [first.id])
            #expect(listed.first?.status == .inactive)
            #expect(refused.status == .conflict)
            #expect(refused.body["type"].string == "/problems/prompt-inactive")
            #expect(aheadWhileInactive.isEmpty, "prompts ahead are taken back and none planned")
            #expect(reactivated.status == .ok)
            #expect(reactivated.body["deactivatedAt"].isNull)
            #expect(listedAfter.first?.status == .open)
            #expect(accepted.status == .created, "\(accepted.text)")
            #expect(try await app.count("responses") == responsesBefore + 1)
            #expect(try await promptsAhead(app, patientID).count > 10, "planned ahead again")
        }
    }

    @Test("a new time zone re-plans the future in the new local time")
    func timeZoneChange() async throws {
        try await withTestApp { app in
            // setup
            let (therapist, patient, patientID, practiceID) = try await practice(app)
            _ = try await createPlan(Self.fixedTimes(["20:00"]), by: therapist, in: practiceID)

            // act
            let moved = try await patient.send(.PATCH, "/me", json: ["timeZone": "America/New_York"])

            // verify
            #expect(moved.status == .ok, "\(moved.text)")
            let newYork = TimeZone(identifier: "America/New_York")!
            let planned = try await prompts(app, patientID)
            #expect(!planned.isEmpty)
            #expect(planned.allSatisfy { LocalDateTime($0.opensAt, in: newYork).time == LocalTime("20:00")! })
        }
    }

    // MARK: Who may plan, and what

    @Test(
        "plans are refused to anyone outside the study's staff",
        arguments: [
            ("another therapist creates", "huber@praxis.example", HTTPMethod.POST, HTTPStatus.notFound),
            ("another therapist lists", "huber@praxis.example", .GET, .notFound),
            ("the patient creates", "patient@example.org", .POST, .forbidden),
        ])
    func planRefusedCallers(_ label: String, email: String, method: HTTPMethod, status: HTTPStatus) async throws {
        try await withTestApp { app in
            // setup
            let (_, _, _, practiceID) = try await practice(app)
            _ = try await app.staff("therapist", "huber@praxis.example")
            let caller = try await app.signIn(email)

            // act
            let reply = try await caller.send(
                method, "/studies/\(practiceID)/plans", json: method == .POST ? Self.daily : nil)

            // verify
            #expect(reply.status == status, "\(label): \(reply.text)")
            #expect(try await app.count("plans") == 0)
        }
    }

    @Test(
        "a plan is checked like any input: the problem names the field and nothing is stored",
        arguments: [
            ("an hour past midnight", Self.fixedTimes(["25:00"]), "pattern.times.0"),
            (
                "an unknown instrument",
                ["instrumentKey": "nope", "durationMinutes": 30, "pattern": ["kind": "once"]] as JSONValue,
                "instrumentKey"
            ),
            ("overlapping windows", Self.fixedTimes(["09:00", "09:30"], minutes: 60), "pattern.times"),
        ])
    func planRefusedInput(_ label: String, plan: JSONValue, field: String) async throws {
        try await withTestApp { app in
            // setup
            let (therapist, _, _, practiceID) = try await practice(app)

            // act
            let reply = try await therapist.send(.POST, "/studies/\(practiceID)/plans", json: plan)

            // verify
            #expect(reply.status == .unprocessableEntity, "\(label)")
            #expect(reply.body.problemFields == [field], "\(label): \(reply.text)")
            #expect(try await app.count("plans") == 0)
        }
    }

    // MARK: Appointments

    @Test("a prompt opens a day before each appointment and closes when it starts")
    func appointmentPrompt() async throws {
        try await withTestApp { app in
            // setup
            let (therapist, patient, patientID, practiceID) = try await practice(app)
            _ = try await createPlan(Self.appointmentPlan, by: therapist, in: practiceID)
            let start = app.clock.now.addingTimeInterval(3 * 86_400)

            // act
            let created = try await patient.send(
                .POST, "/me/appointments", json: Self.appointment("Session", at: start))

            // verify
            #expect(created.status == .created, "\(created.text)")
            let planned = try await prompts(app, patientID)
            #expect(planned.map(\.opensAt) == [start.addingTimeInterval(-86_400)])
            #expect(planned.first?.closesAt == start)
            #expect(planned.first?.instrumentKey == "isf-k")
        }
    }

    @Test("the appointment's prompt follows it when it moves, and goes when it is cancelled")
    func appointmentPromptFollows() async throws {
        try await withTestApp { app in
            // setup
            let (therapist, patient, patientID, practiceID) = try await practice(app)
            _ = try await createPlan(Self.appointmentPlan, by: therapist, in: practiceID)
            let start = app.clock.now.addingTimeInterval(3 * 86_400)
            let created = try await patient.send(
                .POST, "/me/appointments", json: Self.appointment("Session", at: start))
            let appointmentID = try created.decoded(Components.Schemas.Appointment.self).id

            // act: two days later
            let later = start.addingTimeInterval(2 * 86_400)
            let moved = try await patient.send(
                .PATCH, "/me/appointments/\(appointmentID)",
                json: Self.appointment("Session", at: later).merging(["baseVersion": 1]))

            // verify
            #expect(try moved.decoded(Components.Schemas.Appointment.self).version == 2)
            #expect(try await prompts(app, patientID).map(\.closesAt) == [later])

            // act: cancelled
            let cancelled = try await patient.send(.DELETE, "/me/appointments/\(appointmentID)")

            // verify
            #expect(cancelled.status == .noContent)
            #expect(try await prompts(app, patientID).isEmpty)
        }
    }

    @Test("sessions nobody loses: the therapist's are theirs, a retried booking makes one, a stale change is refused")
    func sessionsNobodyLoses() async throws {
        try await withTestApp { app in
            // setup
            let (therapist, patient, patientID, _) = try await practice(app)
            let (stranger, _) = try await app.patient("stranger@example.org")
            try await app.pair(stranger, with: try await app.staff("therapist", "huber@praxis.example").client)
            let start = app.clock.now.addingTimeInterval(3 * 86_400)
            let booking = Self.appointment("Session", at: start).merging(["id": .string(UUID().uuidString)])
            let own = Self.appointment("Dentist", at: start.addingTimeInterval(86_400)).merging([
                "id": .string(UUID().uuidString)
            ])

            // act
            let booked = try await therapist.send(.POST, "/patients/\(patientID)/appointments", json: booking)
            let bookedAgain = try await therapist.send(.POST, "/patients/\(patientID)/appointments", json: booking)
            let sessionID = try booked.decoded(Components.Schemas.Appointment.self).id
            let movedByPatient = try await patient.send(
                .PATCH, "/me/appointments/\(sessionID)",
                json: Self.appointment("Session", at: start.addingTimeInterval(3600)).merging(["baseVersion": 1]))
            let deletedByPatient = try await patient.send(.DELETE, "/me/appointments/\(sessionID)")
            let created = try await patient.send(.POST, "/me/appointments", json: own)
            let createdAgain = try await patient.send(.POST, "/me/appointments", json: own)
            let ownID = try created.decoded(Components.Schemas.Appointment.self).id
            let first = try await patient.send(
                .PATCH, "/me/appointments/\(ownID)", json: own.merging(["baseVersion": 1, "title": "Dentist, room 3"]))
            let stale = try await patient.send(
                .PATCH, "/me/appointments/\(ownID)", json: own.merging(["baseVersion": 1, "title": "Lost"]))
            let noBase = try await patient.send(.PATCH, "/me/appointments/\(ownID)", json: own)
            let takenID = try await stranger.send(.POST, "/me/appointments", json: booking)
            let listed = try await patient.send(.GET, "/me/appointments").decoded([Components.Schemas.Appointment].self)

            // verify
            #expect(booked.status == .created && bookedAgain.status == .created)
            #expect(
                try bookedAgain.decoded(Components.Schemas.Appointment.self).id == sessionID,
                "the retry returns the first booking")
            #expect(
                movedByPatient.status == .conflict
                    && movedByPatient.body["type"].string == "/problems/appointment-of-therapist")
            #expect(
                deletedByPatient.status == .conflict
                    && deletedByPatient.body["type"].string == "/problems/appointment-of-therapist")
            #expect(created.status == .created && createdAgain.status == .created)
            #expect(first.status == .ok)
            #expect(try first.decoded(Components.Schemas.Appointment.self).version == 2)
            #expect(
                stale.status == .conflict && stale.body["type"].string == "/problems/appointment-changed",
                "\(stale.text)")
            #expect(noBase.status == .unprocessableEntity || noBase.status == .badRequest, "\(noBase.text)")
            #expect(
                takenID.status == .conflict && takenID.body["type"].string == "/problems/appointment-id-taken",
                "another's id is refused")
            #expect(listed.map(\.title) == ["Session", "Dentist, room 3"])
            #expect(listed.map(\.bookedBy) == [.therapist, .patient])
            #expect(listed.first?.startsAt == start, "the session stays where the therapist put it")
            #expect(try await app.count("appointments") == 2)
            let told = try await NotificationRecord.query(on: app.database).filter(\.$category == .appointments)
                .filter(\.$user.$id == patientID).all()
            #expect(told.count == 1, "the patient hears once of the session the therapist booked")
            #expect(told.first?.title == "Your therapist booked a session")
            let therapistTold = try await NotificationRecord.query(on: app.database).filter(
                \.$category == .appointments
            )
            .filter(\.$user.$id != patientID).sort(\.$createdAt).all().map(\.body)
            #expect(
                therapistTold.count == 2,
                "the therapist hears once of the appointment the patient entered and once of its change")
            #expect(
                therapistTold.first?.hasPrefix("Patient P-") == true, "named by code, not by name: \(therapistTold)")
            #expect(therapistTold.last?.contains("changed an appointment") == true)
        }
    }

    @Test(
        "the patient asks to move the therapist's session: the therapist is told, grants it, the session and its questionnaire move"
    )
    func moveRequestGranted() async throws {
        try await withTestApp { app in
            // setup
            let (therapist, patient, patientID, practiceID) = try await practice(app)
            _ = try await createPlan(Self.appointmentPlan, by: therapist, in: practiceID)
            let start = app.clock.now.addingTimeInterval(3 * 86_400)
            let later = start.addingTimeInterval(2 * 86_400)
            let booked = try await therapist.send(
                .POST, "/patients/\(patientID)/appointments", json: Self.appointment("Session", at: start))
            let sessionID = try booked.decoded(Components.Schemas.Appointment.self).id
            let own = try await patient.send(
                .POST, "/me/appointments", json: Self.appointment("Dentist", at: later.addingTimeInterval(86_400)))
            let ownID = try own.decoded(Components.Schemas.Appointment.self).id
            let move: JSONValue = [
                "kind": "move", "startsAt": Self.iso(later), "endsAt": Self.iso(later.addingTimeInterval(3000)),
                "note": "I am away that week",
            ]

            // act
            let offGrid = try await patient.send(
                .PUT, "/me/appointments/\(sessionID)/request",
                json: [
                    "kind": "move", "startsAt": Self.iso(later.addingTimeInterval(60)),
                    "endsAt": Self.iso(later.addingTimeInterval(3000)),
                ])
            let ofOwn = try await patient.send(.PUT, "/me/appointments/\(ownID)/request", json: ["kind": "cancel"])
            let asked = try await patient.send(.PUT, "/me/appointments/\(sessionID)/request", json: move)
            let therapistSees = try await therapist.send(.GET, "/patients/\(patientID)/appointments")
                .decoded([Components.Schemas.Appointment].self).first { $0.id == sessionID }
            let stale = try await therapist.send(
                .POST, "/patients/\(patientID)/appointments/\(sessionID)/decision",
                json: ["grant": true, "baseVersion": 1])
            let granted = try await therapist.send(
                .POST, "/patients/\(patientID)/appointments/\(sessionID)/decision",
                json: ["grant": true, "baseVersion": 2])
            let again = try await therapist.send(
                .POST, "/patients/\(patientID)/appointments/\(sessionID)/decision",
                json: ["grant": true, "baseVersion": 3])
            let seen = try await patient.send(.GET, "/me/appointments").decoded([Components.Schemas.Appointment].self)

            // verify
            #expect(
                offGrid.status == .unprocessableEntity && offGrid.body.problemFields == ["startsAt"], "\(offGrid.text)")
            #expect(ofOwn.status == .conflict && ofOwn.body["type"].string == "/problems/appointment-own")
            #expect(asked.status == .ok, "\(asked.text)")
            #expect(therapistSees?.request?.kind == .move && therapistSees?.request?.startsAt == later)
            #expect(therapistSees?.request?.note == "I am away that week")
            #expect(
                stale.status == .conflict && stale.body["type"].string == "/problems/appointment-changed",
                "\(stale.text)")
            #expect(granted.status == .noContent, "\(granted.text)")
            #expect(again.status == .conflict && again.body["type"].string == "/problems/appointment-no-request")
            let session = try #require(seen.first { $0.id == sessionID })
            #expect(session.startsAt == later && session.request == nil && session.version == 3)
            let opens = try await prompts(app, patientID).filter { $0.instrumentKey == "isf-k" }.map(\.opensAt)
            #expect(
                opens == [later.addingTimeInterval(-86_400), later],
                "the questionnaire before the session moved with it")
            let told = try await NotificationRecord.query(on: app.database).filter(\.$category == .appointments)
                .sort(\.$createdAt).all().map(\.title)
            #expect(
                told == [
                    "Your therapist booked a session", "A patient entered an appointment",
                    "A patient asks to move a session",
                    "Your session was moved",
                ])
        }
    }

    @Test(
        "a cancellation request: declined, the session stays; withdrawn, nothing is left to decide; the therapist cancels, the patient hears"
    )
    func cancelRequestDeclinedWithdrawnCancelled() async throws {
        try await withTestApp { app in
            // setup
            let (therapist, patient, patientID, _) = try await practice(app)
            let start = app.clock.now.addingTimeInterval(3 * 86_400)
            let booked = try await therapist.send(
                .POST, "/patients/\(patientID)/appointments", json: Self.appointment("Session", at: start))
            let sessionID = try booked.decoded(Components.Schemas.Appointment.self).id
            let decision = "/patients/\(patientID)/appointments/\(sessionID)/decision"

            // act
            let withTime = try await patient.send(
                .PUT, "/me/appointments/\(sessionID)/request", json: ["kind": "cancel", "startsAt": Self.iso(start)])
            _ = try await patient.send(.PUT, "/me/appointments/\(sessionID)/request", json: ["kind": "cancel"])
            let declined = try await therapist.send(.POST, decision, json: ["grant": false, "baseVersion": 2])
            _ = try await patient.send(.PUT, "/me/appointments/\(sessionID)/request", json: ["kind": "cancel"])
            let withdrawn = try await patient.send(.DELETE, "/me/appointments/\(sessionID)/request")
            let withdrawnAgain = try await patient.send(.DELETE, "/me/appointments/\(sessionID)/request")
            let afterWithdrawal = try await therapist.send(.POST, decision, json: ["grant": true, "baseVersion": 5])
            let kept = try await patient.send(.GET, "/me/appointments").decoded([Components.Schemas.Appointment].self)
            let cancelled = try await therapist.send(.DELETE, "/patients/\(patientID)/appointments/\(sessionID)")

            // verify
            #expect(withTime.status == .unprocessableEntity && withTime.body.problemFields == ["startsAt"])
            #expect(declined.status == .noContent, "\(declined.text)")
            #expect(withdrawn.status == .noContent && withdrawnAgain.status == .conflict)
            #expect(
                afterWithdrawal.status == .conflict
                    && afterWithdrawal.body["type"].string == "/problems/appointment-no-request")
            #expect(kept.map(\.id) == [sessionID] && kept.first?.startsAt == start && kept.first?.request == nil)
            #expect(cancelled.status == .noContent)
            #expect(try await app.count("appointments") == 0)
            let told = try await NotificationRecord.query(on: app.database).filter(\.$user.$id == patientID)
                .filter(\.$category == .appointments).sort(\.$createdAt).all().map(\.title)
            #expect(
                told == [
                    "Your therapist booked a session", "Your session stays as it is", "Your session was cancelled",
                ])
            _ = try await NotificationDispatcher(
                database: app.database, services: app.app.interlude, channels: app.app.notificationChannels
            ).dispatch(now: app.clock.now)
            let sent = try await NotificationRecord.query(on: app.database).filter(\.$category == .appointments).all()
            #expect(
                sent.map(\.status) == Array(repeating: .sent, count: sent.count),
                "news of a cancelled session still goes out")
            #expect(app.mailer.sent.map(\.subject).contains("A patient asks to cancel a session"))
        }
    }

    @Test("appointments are kept with a therapist: a patient who is not paired keeps none")
    func appointmentsNeedPairing() async throws {
        try await withTestApp { app in
            // setup
            let (patient, _) = try await app.patient()

            // act
            let created = try await patient.send(
                .POST, "/me/appointments",
                json: Self.appointment("Dentist", at: app.clock.now.addingTimeInterval(86_400)))

            // verify
            #expect(
                created.status == .conflict && created.body["type"].string == "/problems/not-paired", "\(created.text)")
            #expect(try await app.count("appointments") == 0)
        }
    }

    @Test(
        "appointments are checked at the door: the problem names the field and nothing is stored",
        arguments: [
            ("ends before it starts", "Session", 0.0, -10.0, "endsAt"),
            ("lasts 3 minutes", "Session", 0, 3, "endsAt"),
            ("starts off the 5-minute grid", "Session", 1, 60, "startsAt"),
            ("has an empty title", " ", 0, 50, "title"),
            ("has a title of 201 characters", String(repeating: "t", count: 201), 0, 50, "title"),
        ])
    func appointmentRefused(_ label: String, title: String, startMinute: Double, endMinute: Double, field: String)
        async throws
    {
        try await withTestApp { app in
            // setup
            let (_, patient, _, _) = try await practice(app)
            let base = app.clock.now.addingTimeInterval(86_400)
            let body: JSONValue = [
                "title": .string(title), "startsAt": Self.iso(base.addingTimeInterval(startMinute * 60)),
                "endsAt": Self.iso(base.addingTimeInterval(endMinute * 60)),
            ]

            // act
            let reply = try await patient.send(.POST, "/me/appointments", json: body)

            // verify
            #expect(reply.status == .unprocessableEntity, "\(label): \(reply.text)")
            #expect(reply.body.problemFields.contains(field), "\(label): \(reply.text)")
            #expect(try await app.count("appointments") == 0)
        }
    }

    @Test("the therapist adds an appointment with a comment, the patient sees it, and its title is stored sealed")
    func therapistAddsAppointment() async throws {
        try await withTestApp { app in
            // setup
            let (therapist, patient, patientID, _) = try await practice(app)
            let start = app.clock.now.addingTimeInterval(86_400)

            // act
            let added = try await therapist.send(
                .POST, "/patients/\(patientID.uuidString)/appointments",
                json: Self.appointment("Sitzung", at: start).merging(["comment": "Room 2"]))

            // verify
            #expect(added.status == .created, "\(added.text)")
            let seen = try await patient.send(.GET, "/me/appointments").decoded([Components.Schemas.Appointment].self)
            #expect(seen.map(\.comment) == ["Room 2"])
            let listed = try await therapist.send(.GET, "/patients/\(patientID.uuidString)/appointments")
            #expect(try listed.decoded([Components.Schemas.Appointment].self).map(\.title) == ["Sitzung"])
            let stored = try #require(
                try await app.sql.raw("SELECT title FROM appointments").first()?.decode(
                    column: "title", as: String.self))
            #expect(stored.hasPrefix("v1:"))
        }
    }

    @Test("another therapist cannot read a patient's appointments")
    func appointmentsOfAnotherPractice() async throws {
        try await withTestApp { app in
            // setup
            let (_, patient, patientID, _) = try await practice(app)
            _ = try await patient.send(
                .POST, "/me/appointments",
                json: Self.appointment("Session", at: app.clock.now.addingTimeInterval(86_400)))
            let (other, _) = try await app.staff("therapist", "huber@praxis.example")

            // act
            let reply = try await other.send(.GET, "/patients/\(patientID.uuidString)/appointments")

            // verify
            #expect(reply.status == .notFound)
            #expect(!reply.text.contains("Session"))
        }
    }

    @Test("past appointments are left out unless asked for")
    func pastAppointments() async throws {
        try await withTestApp { app in
            // setup: an appointment tomorrow, then three days pass
            let (_, patient, _, _) = try await practice(app)
            _ = try await patient.send(
                .POST, "/me/appointments",
                json: Self.appointment("Session", at: app.clock.now.addingTimeInterval(86_400)))
            app.clock.advance(by: 3 * 86_400)

            // act
            let upcoming = try await patient.send(.GET, "/me/appointments").decoded(
                [Components.Schemas.Appointment].self)
            let all = try await patient.send(.GET, "/me/appointments?includePast=true").decoded(
                [Components.Schemas.Appointment].self)

            // verify
            #expect(upcoming.isEmpty)
            #expect(all.map(\.title) == ["Session"])
        }
    }

    @Test("the private calendar feed lists appointments in iCalendar form, at one stable address")
    func calendarFeed() async throws {
        try await withTestApp { app in
            // setup
            let (_, patient, _, _) = try await practice(app)
            let start = app.clock.now.addingTimeInterval(86_400)
            _ = try await patient.send(
                .POST, "/me/appointments", json: Self.appointment("Session, with Dr. Berger; room 2", at: start))
            let url = try await patient.send(.GET, "/me/calendar-feed").decoded(Components.Schemas.CalendarFeed.self)
                .url

            // act
            let path = String(url.dropFirst("https://interlude.test".count))
            try await app.app.testing().test(.GET, path) { response in
                // verify
                #expect(response.status == .ok)
                #expect(response.headers.contentType?.subType == "calendar")
                #expect(response.body.string.contains("BEGIN:VEVENT"))
                #expect(response.body.string.contains("SUMMARY:Session\\, with Dr. Berger\\; room 2"))
                #expect(response.body.string.contains("\r\n"))
            }
            #expect(url.hasPrefix("https://interlude.test/calendar/") && url.hasSuffix(".ics"))
            #expect(
                try await patient.send(.GET, "/me/calendar-feed").decoded(Components.Schemas.CalendarFeed.self).url
                    == url)
        }
    }

    @Test("a revoked calendar address stops working, and the next one is new")
    func calendarFeedRevoked() async throws {
        try await withTestApp { app in
            // setup
            let (_, patient, _, _) = try await practice(app)
            let url = try await patient.send(.GET, "/me/calendar-feed").decoded(Components.Schemas.CalendarFeed.self)
                .url

            // act
            let revoked = try await patient.send(.DELETE, "/me/calendar-feed")

            // verify
            #expect(revoked.status == .noContent)
            try await app.app.testing().test(.GET, String(url.dropFirst("https://interlude.test".count))) { response in
                #expect(response.status == .notFound)
            }
            #expect(
                try await patient.send(.GET, "/me/calendar-feed").decoded(Components.Schemas.CalendarFeed.self).url
                    != url)
        }
    }

    // MARK: Adjustments, one-time and on-demand plans

    static let adjustable = daily.merging([
        "adjustment": ["earliest": "07:00", "latest": "21:00", "minCount": 1, "maxCount": 4]
    ])

    @Test("participants see the plans they may adjust, with the plan's bounds")
    func adjustablePlans() async throws {
        try await withTestApp { app in
            // setup
            let (therapist, patient, _, practiceID) = try await practice(app)
            let planID = try await createPlan(Self.adjustable, by: therapist, in: practiceID)

            // act
            let list = try await patient.send(.GET, "/me/plan-adjustments").decoded(
                [Components.Schemas.AdjustablePlan].self)

            // verify
            #expect(list.map(\.planId) == [planID])
            #expect(list.first?.title == "Intersession Daily")
            #expect(list.first?.bounds.maxCount == 4)
            #expect(list.first?.adjustment == nil)
            #expect(list.first?.studyKind == .practice, "the app says the therapist's times, not the study's")
        }
    }

    @Test("an adjustment inside the plan's bounds re-plans the participant's prompts in the new windows")
    func adjustmentInsideBounds() async throws {
        try await withTestApp { app in
            // setup
            let (therapist, patient, patientID, practiceID) = try await practice(app)
            let planID = try await createPlan(Self.adjustable, by: therapist, in: practiceID)

            // act
            let evenings = Self.everyDay([["start": "18:00", "end": "20:59", "count": 2]])
            let set = try await patient.send(
                .PUT, "/me/plan-adjustments", json: ["planId": .string(planID), "adjustment": ["days": evenings]])

            // verify
            #expect(set.status == .ok, "\(set.text)")
            let planned = try await prompts(app, patientID).filter {
                $0.opensAt > app.clock.now.addingTimeInterval(86_400)
            }
            #expect(!planned.isEmpty)
            #expect(
                planned.allSatisfy {
                    let time = LocalDateTime($0.opensAt, in: Self.vienna).time
                    return time >= LocalTime("18:00")! && time <= LocalTime("20:59")!
                })
        }
    }

    @Test("an adjustment outside the plan's bounds is refused, naming the window")
    func adjustmentOutsideBounds() async throws {
        try await withTestApp { app in
            // setup
            let (therapist, patient, _, practiceID) = try await practice(app)
            let planID = try await createPlan(Self.adjustable, by: therapist, in: practiceID)
            let early = Self.everyDay([["start": "18:00", "end": "20:59", "count": 2]]).merging([
                "monday": [["start": "05:00", "end": "09:00", "count": 1]]
            ])

            // act
            let reply = try await patient.send(
                .PUT, "/me/plan-adjustments", json: ["planId": .string(planID), "adjustment": ["days": early]])

            // verify
            #expect(reply.status == .unprocessableEntity)
            #expect(reply.body.problemFields.contains("days.monday.0"))
            #expect(try await app.count("plan_adjustments") == 0)
        }
    }

    @Test("a weekly questionnaire's time is the participant's to choose inside the bounds; outside them it is refused")
    func adjustableWeeklyTime() async throws {
        try await withTestApp { app in
            // setup
            let (therapist, patient, patientID, practiceID) = try await practice(app)
            let planID = try await createPlan(
                [
                    "instrumentKey": "who-5", "durationMinutes": 600,
                    "pattern": ["kind": "weekly", "weekday": "sunday", "time": "18:00"],
                    "adjustment": ["earliest": "08:00", "latest": "20:00", "minCount": 1, "maxCount": 1],
                ],
                by: therapist, in: practiceID)

            // act
            let late = try await patient.send(
                .PUT, "/me/plan-adjustments", json: ["planId": .string(planID), "adjustment": ["time": "22:00"]])
            let morning = try await patient.send(
                .PUT, "/me/plan-adjustments", json: ["planId": .string(planID), "adjustment": ["time": "09:30"]])

            // verify
            #expect(late.status == .unprocessableEntity)
            #expect(late.body.problemFields == ["time"])
            #expect(morning.status == .ok, "\(morning.text)")
            #expect(try morning.decoded(Components.Schemas.AdjustablePlan.self).adjustment?.time == "09:30")
            let ahead = try await promptsAhead(app, patientID)
            #expect(!ahead.isEmpty)
            #expect(
                ahead.allSatisfy {
                    let local = LocalDateTime($0.opensAt, in: Self.vienna)
                    return local.time == LocalTime("09:30")! && local.date.weekday == .sunday
                })
        }
    }

    @Test("where the plan offers both, a participant switches from random windows to fixed times and back")
    func switchToFixedTimes() async throws {
        try await withTestApp { app in
            // setup
            let (therapist, patient, patientID, practiceID) = try await practice(app)
            let either = Self.daily.merging(
                [
                    "adjustment": [
                        "earliest": "07:00", "latest": "21:00", "minCount": 1, "maxCount": 3, "eitherMode": true,
                    ]
                ])
            let planID = try await createPlan(either, by: therapist, in: practiceID)
            let onlyRandom = try await createPlan(Self.adjustable, by: therapist, in: practiceID)
            let fixed: JSONValue = [
                "times": ["08:15", "20:00"], "weekdays": ["monday", "tuesday", "wednesday", "thursday", "friday"],
            ]

            // act
            let refused = try await patient.send(
                .PUT, "/me/plan-adjustments", json: ["planId": .string(onlyRandom), "adjustment": fixed])
            let switched = try await patient.send(
                .PUT, "/me/plan-adjustments", json: ["planId": .string(planID), "adjustment": fixed])
            let aheadFixed = try await promptsAhead(app, patientID).filter {
                $0.planID?.uuidString.lowercased() == planID
            }
            let back = try await patient.send(.PUT, "/me/plan-adjustments", json: ["planId": .string(planID)])
            let aheadRandom = try await promptsAhead(app, patientID).filter {
                $0.planID?.uuidString.lowercased() == planID
            }

            // verify
            #expect(refused.status == .unprocessableEntity)
            #expect(refused.body.problemFields == ["adjustment"])
            #expect(switched.status == .ok, "\(switched.text)")
            #expect(!aheadFixed.isEmpty)
            #expect(
                aheadFixed.allSatisfy {
                    let local = LocalDateTime($0.opensAt, in: Self.vienna)
                    return [LocalTime("08:15")!, LocalTime("20:00")!].contains(local.time)
                        && ![.saturday, .sunday].contains(local.date.weekday)
                })
            #expect(back.status == .ok)
            #expect(
                aheadRandom.contains {
                    ![LocalTime("08:15")!, LocalTime("20:00")!].contains(
                        LocalDateTime($0.opensAt, in: Self.vienna).time)
                })
        }
    }

    @Test("sending no adjustment goes back to the plan as the study made it")
    func adjustmentReset() async throws {
        try await withTestApp { app in
            // setup
            let (therapist, patient, _, practiceID) = try await practice(app)
            let planID = try await createPlan(Self.adjustable, by: therapist, in: practiceID)
            _ = try await patient.send(
                .PUT, "/me/plan-adjustments",
                json: [
                    "planId": .string(planID),
                    "adjustment": ["days": Self.everyDay([["start": "18:00", "end": "20:59", "count": 2]])],
                ])

            // act
            let reset = try await patient.send(.PUT, "/me/plan-adjustments", json: ["planId": .string(planID)])

            // verify
            #expect(reset.status == .ok)
            #expect(try reset.decoded(Components.Schemas.AdjustablePlan.self).adjustment == nil)
        }
    }

    @Test("a one-time questionnaire comes first: repeated ones are blocked until it is answered")
    func oneTimeFirst() async throws {
        try await withTestApp { app in
            // setup
            let (therapist, patient, patientID, practiceID) = try await practice(app)
            _ = try await createPlan(
                ["instrumentKey": "who-5", "durationMinutes": 10080, "pattern": ["kind": "once"]], by: therapist,
                in: practiceID)
            _ = try await createPlan(Self.fixedTimes(["08:30"], minutes: 600), by: therapist, in: practiceID)
            let planned = try await prompts(app, patientID)
            let mood = try #require(planned.first { $0.instrumentKey == "mood-vas" && $0.opensAt <= app.clock.now })

            // act
            let open = try await patient.send(.GET, "/me/prompts").decoded([Components.Schemas.Prompt].self)
            let blocked = try await submit(mood, answers: ["mood": 50], by: patient, at: app.clock.now)

            // verify
            #expect(open.map(\.instrumentKey) == ["who-5", "mood-vas"])
            #expect(open.map(\.blocked) == [nil, true])
            #expect(blocked.status == .conflict)
            #expect(blocked.body["type"].string == "/problems/one-time-first")
            #expect(planned.filter { $0.occurrence == "once" }.count == 1)
        }
    }

    @Test("once the one-time questionnaire is answered, the repeated ones open")
    func oneTimeAnswered() async throws {
        try await withTestApp { app in
            // setup
            let (therapist, patient, patientID, practiceID) = try await practice(app)
            _ = try await createPlan(
                ["instrumentKey": "who-5", "durationMinutes": 10080, "pattern": ["kind": "once"]], by: therapist,
                in: practiceID)
            _ = try await createPlan(Self.fixedTimes(["08:30"], minutes: 600), by: therapist, in: practiceID)
            let who = try #require(try await prompts(app, patientID).first { $0.instrumentKey == "who-5" })

            // act
            let answers: JSONValue = .object(
                Dictionary(uniqueKeysWithValues: (1...5).map { ("who5_\($0)", JSONValue.string("3")) }))
            let answered = try await submit(who, answers: answers, by: patient, at: app.clock.now)

            // verify
            #expect(answered.status == .created, "\(answered.text)")
            let open = try await patient.send(.GET, "/me/prompts").decoded([Components.Schemas.Prompt].self)
            #expect(open.map(\.instrumentKey) == ["mood-vas"])
            #expect(open.first?.blocked == nil)
        }
    }

    static let onDemandPlan: JSONValue = [
        "instrumentKey": "mood-vas", "durationMinutes": 60, "pattern": ["kind": "onDemand"],
    ]

    @Test("an on-demand plan is offered to its participants and opens a prompt when one asks")
    func onDemand() async throws {
        try await withTestApp { app in
            // setup
            let (therapist, patient, _, practiceID) = try await practice(app)
            let planID = try await createPlan(Self.onDemandPlan, by: therapist, in: practiceID)
            let offered = try await patient.send(.GET, "/me/on-demand-prompts").decoded(
                [Components.Schemas.OnDemandPlan].self)

            // act
            let started = try await patient.send(.POST, "/me/on-demand-prompts", json: ["planId": .string(planID)])

            // verify
            #expect(offered.map(\.planId) == [planID])
            #expect(offered.first?.title.isEmpty == false)
            #expect(started.status == .created)
            let prompt = try started.decoded(Components.Schemas.Prompt.self)
            #expect(prompt.status == .open)
            #expect(prompt.source == .onDemand)
            #expect(prompt.closesAt.timeIntervalSince(prompt.opensAt) == 3600)
        }
    }

    @Test(
        "on-demand prompts are refused for a plan that is not on demand, and for a plan of someone else's study",
        arguments: [("a scheduled plan", false), ("another practice's participant", true)])
    func onDemandRefused(_ label: String, stranger: Bool) async throws {
        try await withTestApp { app in
            // setup
            let (therapist, patient, _, practiceID) = try await practice(app)
            let onDemandID = try await createPlan(Self.onDemandPlan, by: therapist, in: practiceID)
            let dailyID = try await createPlan(Self.daily, by: therapist, in: practiceID)
            let caller = stranger ? try await app.patient("stranger@example.org").0 : patient
            let before = try await app.count("prompts")

            // act
            let reply = try await caller.send(
                .POST, "/me/on-demand-prompts", json: ["planId": .string(stranger ? onDemandID : dailyID)])

            // verify
            #expect(reply.status == .unprocessableEntity, "\(label): \(reply.text)")
            #expect(reply.body.problemFields == ["planId"], "\(label)")
            #expect(try await app.count("prompts") == before)
            if stranger { #expect(try await caller.send(.GET, "/me/on-demand-prompts").body.array.isEmpty) }
        }
    }

    // MARK: Preview

    @Test("the preview shows any period in local time, across the spring change, without storing anything")
    func preview() async throws {
        try await withTestApp { app in
            // setup
            let (therapist, _, patientID, practiceID) = try await practice(app)
            _ = try await createPlan(Self.fixedTimes(["02:30", "09:00"]), by: therapist, in: practiceID)
            let before = try await app.count("prompts")

            // act
            let reply = try await therapist.send(
                .GET, "/patients/\(patientID.uuidString)/schedule-preview?from=2026-03-28&days=3")

            // verify
            #expect(reply.status == .ok, "\(reply.text)")
            let items = try reply.decoded([Components.Schemas.PlannedPrompt].self)
            #expect(items.allSatisfy { $0.timeZone == "Europe/Vienna" })
            #expect(
                items.map(\.localOpensAt) == [
                    "2026-03-28T02:30", "2026-03-28T09:00", "2026-03-29T03:30", "2026-03-29T09:00", "2026-03-30T02:30",
                    "2026-03-30T09:00",
                ])
            #expect(reply.body[2]["opensAt"].string == "2026-03-29T01:30:00Z")
            #expect(try await app.count("prompts") == before)
        }
    }

    @Test(
        "the preview is refused to another therapist and for a date not in ISO form",
        arguments: [
            ("another therapist", "huber@praxis.example", "2026-03-28", HTTPStatus.notFound),
            ("a day-first date", "berger@praxis.example", "28.03.2026", .unprocessableEntity),
        ])
    func previewRefused(_ label: String, email: String, from: String, status: HTTPStatus) async throws {
        try await withTestApp { app in
            // setup
            let (_, _, patientID, _) = try await practice(app)
            _ = try await app.staff("therapist", "huber@praxis.example")
            let caller = try await app.signIn(email)

            // act
            let reply = try await caller.send(.GET, "/patients/\(patientID.uuidString)/schedule-preview?from=\(from)")

            // verify
            #expect(reply.status == status, "\(label): \(reply.text)")
        }
    }

    // MARK: Arms

    /// A research study with arms "app" and "control", allocated in turn, and two enrolled participants.
    func armedStudy(_ app: TestContext) async throws -> (
        researcher: APIClient, studyID: String, first: UUID, second: UUID
    ) {
        let (researcher, _) = try await app.staff("researcher", "lab@uni.example")
        let study = StudyAPITests.study("open").merging(["arms": ["app", "control"], "allocation": "alternating"])
        let created = try await researcher.send(.POST, "/studies", json: study)
        let studyID = try created.decoded(Components.Schemas.Study.self).id
        let (first, firstID) = try await app.patient("first@example.org")
        let (second, secondID) = try await app.patient("second@example.org")
        _ = try await first.send(.POST, "/studies/\(studyID)/enrollment", json: ["consentVersion": "2026-1"])
        _ = try await second.send(.POST, "/studies/\(studyID)/enrollment", json: ["consentVersion": "2026-1"])
        return (researcher, studyID, firstID, secondID)
    }

    @Test("participants are assigned to the study's arms in turn")
    func armsAlternate() async throws {
        try await withTestApp { app in
            // setup / act
            let (_, _, first, second) = try await armedStudy(app)

            // verify
            let arms = try await EnrollmentRecord.query(on: app.database).all()
            #expect(arms.first { $0.$patient.id == first }?.arm == "app")
            #expect(arms.first { $0.$patient.id == second }?.arm == "control")
        }
    }

    @Test("a plan for one arm reaches only that arm's participants")
    func planForOneArm() async throws {
        try await withTestApp { app in
            // setup
            let (researcher, studyID, first, second) = try await armedStudy(app)

            // act
            _ = try await createPlan(Self.fixedTimes(["20:00"]).merging(["arm": "app"]), by: researcher, in: studyID)

            // verify
            #expect(try await prompts(app, first).count > 0)
            #expect(try await prompts(app, second).isEmpty)
        }
    }

    @Test("a plan for an arm the study does not have is refused")
    func planForUnknownArm() async throws {
        try await withTestApp { app in
            // setup
            let (researcher, studyID, _, _) = try await armedStudy(app)

            // act
            let reply = try await researcher.send(
                .POST, "/studies/\(studyID)/plans", json: Self.fixedTimes(["20:00"]).merging(["arm": "other"]))

            // verify
            #expect(reply.status == .unprocessableEntity)
            #expect(reply.body.problemFields == ["arm"])
            #expect(try await app.count("plans") == 0)
        }
    }

    // MARK: Several processes

    @Test(
        "two server processes planning at once on one PostgreSQL create every prompt exactly once",
        .enabled(if: TestDatabase.postgresURL != nil))
    func twoProcesses() async throws {
        try await withTestApp { app in
            // setup: six participants and a plan nobody has planned yet
            let (therapist, _, patientID, practiceID) = try await practice(app)
            for index in 0..<5 {
                let (extra, _) = try await app.patient("extra\(index)@example.org")
                try await app.pair(extra, with: therapist)
            }
            try await storeDailyUnplanned(app, in: practiceID)
            let twin = try await app.twin()
            let now = app.clock.now
            let everyone = Set(try await allPatients(app))

            // act
            async let one = Planner(database: app.database, services: app.app.interlude).run(
                now: now, patients: everyone)
            async let two = Planner(database: twin.db, services: app.app.interlude).run(now: now, patients: everyone)
            let reports = try await [one, two]
            try await twin.asyncShutdown()

            // verify
            #expect(reports[0].created + reports[1].created == (try await app.count("prompts")))
            let duplicates = try await app.sql.raw(
                "SELECT patient_id, occurrence, COUNT(*) AS n FROM prompts GROUP BY patient_id, occurrence HAVING COUNT(*) > 1"
            ).all()
            #expect(duplicates.isEmpty)
            #expect(try await prompts(app, patientID).count >= 39)
            #expect(
                try await Planner(database: app.database, services: app.app.interlude).runAll(now: now).created == 0)
        }
    }

    @Test(
        "while one process plans on PostgreSQL, a second process's planner run waits its turn and creates nothing",
        .enabled(if: TestDatabase.postgresURL != nil))
    func plannerRunsInOneProcessAtATime() async throws {
        try await withTestApp { app in
            // setup
            let (_, _, patientID, practiceID) = try await practice(app)
            try await storeDailyUnplanned(app, in: practiceID)
            let twin = try await app.twin()
            let now = app.clock.now

            // act: the first process holds the planner's lock for the length of its run
            try await app.database.transaction { holder in
                #expect(try await Planner.tryLock(on: holder))
                let skipped = try await Planner(database: twin.db, services: app.app.interlude).runAll(now: now)

                // verify
                #expect(skipped == Planner.Report())
            }
            let planned = try await Planner(database: twin.db, services: app.app.interlude).runAll(now: now)
            try await twin.asyncShutdown()
            #expect(planned.created >= 39)
            #expect(try await prompts(app, patientID).count == planned.created)
        }
    }
}
