import Fluent
import Foundation
import InterludeCore
import Testing
import VaporTesting

@testable import InterludeServer

@Suite("Console: plans, previews, compliance and appointments")
struct ConsoleScheduleTests {
    /// A therapist signed in to the console with a paired patient, and the practice's id.
    func practice(_ app: TestContext) async throws -> (
        console: ConsoleBrowser, patient: APIClient, patientID: UUID, practiceID: UUID
    ) {
        let (therapist, therapistID) = try await app.staff("therapist", "berger@praxis.example")
        let (patient, patientID) = try await app.patient(name: "Ada")
        try await app.pair(patient, with: therapist)
        let practice = try #require(
            try await StudyRecord.query(on: app.database).filter(\.$owner.$id == therapistID).first())
        let console = ConsoleBrowser(app)
        _ = try await console.signIn("berger@praxis.example")
        _ = try await console.get("/console/patients")
        return (console, patient, patientID, try practice.requireID())
    }

    static let fixedTwiceDaily: [(String, String)] = [
        ("instrumentKey", "mood-vas"), ("kind", "fixedTimes"), ("times", "08:30, 20:00"), ("duration", "1"),
        ("durationUnit", "hours"),
        ("weekdays[]", "monday"), ("weekdays[]", "tuesday"), ("weekdays[]", "wednesday"), ("weekdays[]", "thursday"),
        ("weekdays[]", "friday"), ("weekdays[]", "saturday"), ("weekdays[]", "sunday"),
    ]

    func plansPath(_ practiceID: UUID) -> String { "/console/studies/\(practiceID)/plans" }

    /// Attaches the twice-daily plan to `target` and answers the form's reply.
    func attach(_ console: ConsoleBrowser, _ practiceID: UUID, target: String = "all") async throws
        -> ConsoleBrowser.Page
    {
        try await console.post(
            plansPath(practiceID), Self.fixedTwiceDaily + [("target", target), ("action", "attach")])
    }

    // MARK: The plans page

    @Test("the plans menu leads a therapist to the practice's plans, which name the practice's patients")
    func plansPage() async throws {
        try await withTestApp { app in
            // setup
            let (console, _, _, practiceID) = try await practice(app)

            // act
            let menu = try await console.get("/console/plans")
            let page = try await console.get(plansPath(practiceID))

            // verify
            #expect(menu.location == plansPath(practiceID))
            #expect(page.status == .ok && page.html.contains("Ada"))
        }
    }

    @Test("a preview shows the plan across the spring change in the patient's time, stores nothing, and is audited")
    func preview() async throws {
        try await withTestApp { app in
            // setup
            let (console, _, patientID, practiceID) = try await practice(app)

            // act
            let preview = try await console.post(
                plansPath(practiceID),
                Self.fixedTwiceDaily + [
                    ("target", "patient:\(patientID)"), ("action", "preview"), ("previewPatient", patientID.uuidString),
                    ("previewFrom", "2026-03-26"), ("previewDays", "7"),
                ])

            // verify
            #expect(preview.status == .ok)
            #expect(preview.html.contains("id=\"preview-count\">14<"))
            #expect(preview.html.contains("<tr data-date=\"2026-03-29\" class=\"offset-changed\">"))
            #expect(preview.html.contains("UTC+02:00"))
            #expect(try await app.count("plans") == 0)
            #expect(try await app.count("prompts") == 0)
            #expect(try await app.count("audit_events WHERE action = 'schedule.previewed'") == 1)
        }
    }

    @Test("a plan without times is refused: the form comes back with the message beside the field, nothing stored")
    func refusedPlan() async throws {
        try await withTestApp { app in
            // setup
            let (console, _, _, practiceID) = try await practice(app)

            // act
            let refused = try await console.post(
                plansPath(practiceID),
                Self.fixedTwiceDaily.map { $0.0 == "times" ? ("times", "") : $0 } + [
                    ("target", "all"), ("action", "attach"),
                ])

            // verify
            #expect(refused.status == .unprocessableEntity)
            #expect(refused.html.contains("id=\"times-error\""))
            #expect(try await app.count("plans") == 0)
        }
    }

    @Test("a plan attached for one patient plans that patient's prompts, is audited and shows on the patient's page")
    func attachForOnePatient() async throws {
        try await withTestApp { app in
            // setup
            let (console, _, patientID, practiceID) = try await practice(app)

            // act
            let attached = try await attach(console, practiceID, target: "patient:\(patientID)")

            // verify
            #expect(attached.status == .seeOther)
            #expect(attached.location == "/console/patients/\(patientID)?planAdded=1")
            let plan = try #require(try await PlanRecord.query(on: app.database).first())
            #expect(plan.$patient.id == patientID)
            #expect(try await app.count("prompts") >= 26)
            #expect(try await app.count("audit_events WHERE action = 'plan.changed'") == 1)
            let patientPage = try await console.get("/console/patients/\(patientID)")
            #expect(patientPage.html.contains("only this patient"))
            #expect(patientPage.html.contains("At 08:30, 20:00, every day"))
        }
    }

    @Test("removing a plan takes its future prompts with it")
    func removePlan() async throws {
        try await withTestApp { app in
            // setup
            let (console, _, _, practiceID) = try await practice(app)
            _ = try await attach(console, practiceID)
            let plan = try #require(try await PlanRecord.query(on: app.database).first())

            // act
            let removed = try await console.post("\(plansPath(practiceID))/\(plan.id!)/delete", [])

            // verify
            #expect(removed.status == .seeOther)
            #expect(try await app.count("plans") == 0)
            #expect(try await PromptRecord.query(on: app.database).all().allSatisfy { $0.opensAt <= app.clock.now })
        }
    }

    @Test("deactivating a plan marks it in the list and offers to activate it again; activating undoes it")
    func deactivatePlan() async throws {
        try await withTestApp { app in
            // setup
            let (console, _, _, practiceID) = try await practice(app)
            _ = try await attach(console, practiceID)
            let plan = try #require(try await PlanRecord.query(on: app.database).first())
            let before = try await console.get(plansPath(practiceID))

            // act
            let deactivated = try await console.post("\(plansPath(practiceID))/\(plan.id!)/deactivate", [])
            let marked = try await console.get(plansPath(practiceID) + "?done=deactivated")
            let activated = try await console.post("\(plansPath(practiceID))/\(plan.id!)/activate", [])
            let after = try await console.get(plansPath(practiceID))

            // verify
            #expect(before.html.contains("/\(plan.id!)/deactivate"))
            #expect(deactivated.status == .seeOther)
            #expect(marked.html.contains("The questionnaire is deactivated"))
            #expect(marked.html.contains("/\(plan.id!)/activate\""))
            #expect(marked.html.contains(">deactivated<"))
            #expect(activated.status == .seeOther)
            #expect(try await PlanRecord.find(plan.id, on: app.database)?.deactivatedAt == nil)
            #expect(after.html.contains("/\(plan.id!)/deactivate"))
            #expect(!after.html.contains(">deactivated<"))
        }
    }

    enum Outsider: String, CaseIterable, Sendable {
        case otherTherapistReadsPlans, otherTherapistAttaches, otherTherapistReadsSchedule, researcherReadsSchedule,
            researcherReadsPlans
    }

    @Test("plans and schedules are closed to staff of other practices and studies", arguments: Outsider.allCases)
    func isolation(_ outsider: Outsider) async throws {
        try await withTestApp { app in
            // setup
            let (_, _, patientID, practiceID) = try await practice(app)
            let email = outsider.rawValue.hasPrefix("researcher") ? "lab@uni.example" : "huber@praxis.example"
            _ = try await app.staff(email == "lab@uni.example" ? "researcher" : "therapist", email)
            let browser = ConsoleBrowser(app)
            _ = try await browser.signIn(email)
            _ = try await browser.get(email == "lab@uni.example" ? "/console/studies" : "/console/patients")

            // act
            let page: ConsoleBrowser.Page
            switch outsider {
            case .otherTherapistReadsPlans, .researcherReadsPlans: page = try await browser.get(plansPath(practiceID))
            case .otherTherapistAttaches: page = try await attach(browser, practiceID)
            case .otherTherapistReadsSchedule, .researcherReadsSchedule:
                page = try await browser.get("/console/schedule/\(patientID)")
            }

            // verify
            #expect(page.status == .notFound)
            #expect(!page.html.contains("Ada"))
            #expect(try await app.count("plans") == 0)
        }
    }

    // MARK: The schedule page

    @Test("the schedule page shows any period in the patient's local time, across the autumn change, and is audited")
    func schedulePage() async throws {
        try await withTestApp { app in
            // setup
            let (console, _, patientID, practiceID) = try await practice(app)
            _ = try await attach(console, practiceID)

            // act
            let autumn = try await console.get("/console/schedule/\(patientID)?from=2026-10-24&days=3")

            // verify
            #expect(autumn.status == .ok)
            #expect(autumn.html.contains("Europe/Vienna"))
            #expect(autumn.html.contains("id=\"preview-count\">6<"))
            #expect(autumn.html.contains("<tr data-date=\"2026-10-25\" class=\"offset-changed\">"))
            #expect(autumn.html.contains("08:30–09:30"))
            #expect(try await app.count("audit_events WHERE action = 'schedule.previewed'") == 1)
        }
    }

    @Test(
        "the schedule page refuses a date that does not exist and a period over a year, beside the field",
        arguments: [("from=2026-13-01", "from"), ("days=400", "days")])
    func schedulePageRefused(_ query: String, field: String) async throws {
        try await withTestApp { app in
            // setup
            let (console, _, patientID, _) = try await practice(app)

            // act
            let page = try await console.get("/console/schedule/\(patientID)?\(query)")

            // verify
            #expect(page.status == .unprocessableEntity)
            #expect(page.html.contains("id=\"\(field)-error\""))
        }
    }

    // MARK: Compliance and appointments

    @Test("compliance counts answered, missed and open prompts on the caseload and the patient's page")
    func compliance() async throws {
        try await withTestApp { app in
            // setup: one answered, one missed, one open, one still ahead
            let (console, _, patientID, practiceID) = try await practice(app)
            let now = app.clock.now
            for (offset, status) in [
                (-7200.0, PromptStatus.completed), (-7200.0, .scheduled), (-60.0, .scheduled), (3600.0, .scheduled),
            ] {
                let prompt = PromptRecord(
                    patientID: patientID, studyID: practiceID, assignedBy: nil, instrumentKey: "mood-vas",
                    instrumentVersion: 1, opensAt: now.addingTimeInterval(offset),
                    closesAt: now.addingTimeInterval(offset + 3600), source: PromptSource.manual, now: now)
                prompt.status = status
                try await prompt.create(on: app.database)
            }

            // act
            let caseload = try await console.get("/console/patients")
            let page = try await console.get("/console/patients/\(patientID)")

            // verify
            #expect(caseload.html.contains(">1 / 1 / 1 · 50 %</td>"))
            #expect(
                page.html.contains(
                    "answered <strong>1</strong> · missed <strong>1</strong> · open <strong>1</strong> (50 %)"))
        }
    }

    static let appointmentForm: [(String, String)] = [
        ("title", "Session"), ("date", "2026-03-10"), ("startTime", "10:00"), ("endTime", "10:50"),
    ]

    @Test("the therapist adds an appointment on the patient's page, in the patient's local time")
    func addAppointment() async throws {
        try await withTestApp { app in
            // setup
            let (console, patient, patientID, _) = try await practice(app)

            // act
            let added = try await console.post("/console/patients/\(patientID)/appointments", Self.appointmentForm)

            // verify
            #expect(added.status == .created)
            #expect(added.html.contains("Session"))
            let mine = try await patient.send(.GET, "/me/appointments").decoded([Components.Schemas.Appointment].self)
            #expect(mine.map(\.startsAt) == [try Date("2026-03-10T09:00:00Z", strategy: .iso8601)])
            #expect(mine.map(\.bookedBy) == [.therapist])
        }
    }

    @Test("the same form sent twice books one session; a fresh form books another")
    func appointmentFormSentTwice() async throws {
        try await withTestApp { app in
            // setup
            let (console, patient, patientID, _) = try await practice(app)
            let form = try await console.get("/console/patients/\(patientID)")
            let id = try #require(
                form.html.firstMatch(of: try Regex(#"name="id" value="([0-9A-F-]{36})""#))?.output[1].substring)
            let path = "/console/patients/\(patientID)/appointments"

            // act
            let first = try await console.post(path, [("id", String(id))] + Self.appointmentForm)
            let again = try await console.post(path, [("id", String(id))] + Self.appointmentForm)
            let fresh = try #require(
                again.html.firstMatch(of: try Regex(#"name="id" value="([0-9A-F-]{36})""#))?.output[1].substring)
            let other = try await console.post(path, [("id", String(fresh))] + Self.appointmentForm)

            // verify
            #expect(first.status == .created && again.status == .created && other.status == .created)
            #expect(fresh != id, "each rendered form has an id of its own")
            #expect(
                try await patient.send(.GET, "/me/appointments").decoded([Components.Schemas.Appointment].self).count
                    == 2)
        }
    }

    @Test("an appointment off the five-minute grid is refused beside its field, and nothing is stored")
    func appointmentOffGrid() async throws {
        try await withTestApp { app in
            // setup
            let (console, _, patientID, _) = try await practice(app)

            // act
            let offGrid = try await console.post(
                "/console/patients/\(patientID)/appointments",
                Self.appointmentForm.map { $0.0 == "startTime" ? ("startTime", "10:03") : $0 })

            // verify
            #expect(offGrid.status == .unprocessableEntity)
            #expect(offGrid.html.contains("id=\"appointment-start-error\""))
            #expect(try await app.count("appointments") == 0)
        }
    }

    // MARK: A researcher's study

    /// The Track Your Stress demo, with its researcher signed in; answers the study and its demo participant.
    func trackYourStress(_ app: TestContext) async throws -> (console: ConsoleBrowser, studyID: UUID, patientID: UUID) {
        let accounts = try await DemoSetup(database: app.database, services: app.app.interlude, logger: app.app.logger)
            .create(.trackYourStress)
        let researcher = try #require(accounts.first { $0.role == .researcher })
        let patient = try #require(accounts.first { $0.role == .patient })
        let patientID = try #require(
            try await UserRecord.query(on: app.database).filter(\.$email == patient.email).first()?.id)
        let console = ConsoleBrowser(app)
        _ = try await console.signIn(researcher.email, password: researcher.password)
        _ = try await console.get("/console/studies")
        let study = try #require(
            try await StudyRecord.query(on: app.database).filter(\.$title == "Track Your Stress").first())
        return (console, try study.requireID(), patientID)
    }

    @Test("a researcher's study page leads to its plans and to each participant's schedule")
    func researcherStudyPage() async throws {
        try await withTestApp { app in
            // setup
            let (console, studyID, patientID) = try await trackYourStress(app)

            // act
            let page = try await console.get("/console/studies/\(studyID)")

            // verify
            #expect(page.html.contains(plansPath(studyID)))
            #expect(page.html.contains("/console/schedule/\(patientID)"))
        }
    }

    @Test("a study's plans are described in words: weekly, monthly, once first, adjustable bounds")
    func researcherPlans() async throws {
        try await withTestApp { app in
            // setup
            let (console, studyID, _) = try await trackYourStress(app)

            // act
            let plans = try await console.get(plansPath(studyID))

            // verify
            #expect(plans.html.components(separatedBy: "<tr data-plan=").count == 5)
            #expect(plans.html.contains("Every Sunday at 18:00"))
            #expect(plans.html.contains("Monthly on the 1st at 18:00"))
            #expect(plans.html.contains("open for 1 day"), "durations in the unit people think in")
            #expect(!plans.html.contains("1440"))
            #expect(plans.html.contains("Once on joining, before repeated ones"))
            #expect(plans.html.contains("adjustable 07:00–22:00, 1–6 a day"))
        }
    }

    @Test(
        "the plan form takes spans in hours, days and weeks and the day of the month by name; a wrong unit is refused by field"
    )
    func planFormUnits() async throws {
        try await withTestApp { app in
            // setup
            let (console, _, _, practiceID) = try await practice(app)
            let monthly: [(String, String)] = [
                ("instrumentKey", "who-5"), ("kind", "monthly"), ("day", "-1"), ("time", "18:00"), ("duration", "2"),
                ("durationUnit", "days"), ("reminders", "12"), ("remindersUnit", "hours"), ("target", "all"),
                ("action", "attach"),
            ]

            // act
            let form = try await console.get(plansPath(practiceID))
            let wrongUnit = try await console.post(
                plansPath(practiceID), monthly.map { $0.0 == "durationUnit" ? ($0.0, "fortnights") : $0 })
            let attached = try await console.post(plansPath(practiceID), monthly)

            // verify
            #expect(form.html.contains(#"<option value="-1">the last day</option>"#))
            #expect(form.html.contains(#"<option value="1">the 1st</option>"#))
            #expect(
                form.html.contains(#"<option value="hours" selected>hours</option>"#), "a new plan is open for 1 hour")
            #expect(wrongUnit.status == .unprocessableEntity && wrongUnit.html.contains(#"id="duration-error""#))
            #expect(attached.status == .seeOther, "\(attached.status)")
            let plan = try #require(
                try await PlanRecord.query(on: app.database).filter(\.$instrumentKey == "who-5").first())
            let definition = try JSONDecoder().decode(SchedulePlan.self, from: Data(plan.definition.utf8))
            #expect(definition.durationMinutes == 2 * 24 * 60 && definition.reminderMinutes == [12 * 60])
            #expect(definition.pattern == .monthly(day: -1, time: LocalTime("18:00")!))
            let listed = try await console.get(plansPath(practiceID))
            #expect(listed.html.contains("Monthly on the last day at 18:00"))
            #expect(listed.html.contains("open for 2 days"))
        }
    }

    @Test("random windows are rows of from, until and how many; a row with a wrong time is refused naming its weekday")
    func planFormWindowRows() async throws {
        try await withTestApp { app in
            // setup
            let (console, _, _, practiceID) = try await practice(app)
            let rows: [(String, String)] = [
                ("instrumentKey", "mood-vas"), ("kind", "randomWindows"), ("duration", "30"),
                ("durationUnit", "minutes"),
                ("windows[monday][0][from]", "08:00"), ("windows[monday][0][until]", "11:59"),
                ("windows[monday][0][count]", "2"),
                ("windows[monday][1][from]", "12:00"), ("windows[monday][1][until]", "15:59"),
                ("windows[monday][1][count]", ""),
                ("windows[monday][2][from]", ""), ("windows[monday][2][until]", ""), ("windows[monday][2][count]", ""),
                ("target", "all"), ("action", "attach"),
            ]

            // act
            let form = try await console.get(plansPath(practiceID))
            let refused = try await console.post(
                plansPath(practiceID), rows.map { $0.0 == "windows[monday][1][until]" ? ($0.0, "noon") : $0 })
            let attached = try await console.post(plansPath(practiceID), rows)

            // verify
            #expect(form.html.contains(#"name="windows[sunday][2][count]""#), "three empty rows a day to fill in")
            #expect(refused.status == .unprocessableEntity && refused.html.contains(#"id="windowsMonday-error""#))
            #expect(refused.html.contains(#"name="windows[monday][0][count]" value="2""#), "what was typed is kept")
            #expect(attached.status == .seeOther, "\(attached.html)")
            let plan = try #require(
                try await PlanRecord.query(on: app.database).filter(\.$instrumentKey == "mood-vas").first())
            let definition = try JSONDecoder().decode(SchedulePlan.self, from: Data(plan.definition.utf8))
            #expect(
                definition.pattern
                    == .randomWindows(days: [
                        .monday: [
                            TimeWindow(start: LocalTime("08:00")!, end: LocalTime("11:59")!, count: 2),
                            TimeWindow(start: LocalTime("12:00")!, end: LocalTime("15:59")!, count: 1),
                        ]
                    ]))
        }
    }

    @Test("a researcher reads a participant's schedule with the study's plan names")
    func researcherSchedule() async throws {
        try await withTestApp { app in
            // setup
            let (console, _, patientID) = try await trackYourStress(app)

            // act
            let schedule = try await console.get("/console/schedule/\(patientID)?days=7")

            // verify
            #expect(schedule.status == .ok)
            #expect(schedule.html.contains("Track Your Stress: daily"))
        }
    }

    @Test("a plan for an arm the study does not have is refused beside the target, and nothing is stored")
    func unknownArm() async throws {
        try await withTestApp { app in
            // setup
            let (console, studyID, _) = try await trackYourStress(app)
            let before = try await app.count("plans")

            // act
            let refused = try await console.post(
                plansPath(studyID),
                [
                    ("instrumentKey", "tys-weekly"), ("kind", "weekly"), ("weekday", "monday"), ("time", "19:00"),
                    ("duration", "1"), ("durationUnit", "hours"), ("target", "arm:B"), ("action", "attach"),
                ])

            // verify
            #expect(refused.status == .unprocessableEntity)
            #expect(refused.html.contains("id=\"target-error\""))
            #expect(try await app.count("plans") == before)
        }
    }
}
