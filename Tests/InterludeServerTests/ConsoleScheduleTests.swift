import Fluent
import Foundation
import InterludeCore
import Testing
import VaporTesting

@testable import InterludeServer

@Suite("Console: plans, previews, compliance and appointments")
struct ConsoleScheduleTests {
    /// A therapist signed in to the console with a paired patient, and the practice's id.
    func practice(_ app: TestContext) async throws -> (console: ConsoleBrowser, patient: APIClient, patientID: UUID, practiceID: UUID) {
        let (therapist, therapistID) = try await app.staff("therapist", "berger@praxis.example")
        let (patient, patientID) = try await app.patient(name: "Ada")
        try await app.pair(patient, with: therapist)
        let practice = try #require(try await StudyRecord.query(on: app.database).filter(\.$owner.$id == therapistID).first())
        let console = ConsoleBrowser(app)
        _ = try await console.signIn("berger@praxis.example")
        _ = try await console.get("/console/patients")
        return (console, patient, patientID, try practice.requireID())
    }

    static let fixedTwiceDaily: [(String, String)] = [
        ("instrumentKey", "mood-vas"), ("kind", "fixedTimes"), ("times", "08:30, 20:00"), ("durationMinutes", "60"),
        ("weekdays[]", "monday"), ("weekdays[]", "tuesday"), ("weekdays[]", "wednesday"), ("weekdays[]", "thursday"),
        ("weekdays[]", "friday"), ("weekdays[]", "saturday"), ("weekdays[]", "sunday"),
    ]

    @Test("a therapist previews a plan without storing anything, then attaches it for one patient")
    func previewThenAttach() async throws {
        try await withTestApp { app in
            let (console, _, patientID, practiceID) = try await practice(app)
            #expect(try await console.get("/console/plans").location == "/console/studies/\(practiceID)/plans")
            let page = try await console.get("/console/studies/\(practiceID)/plans")
            #expect(page.status == .ok && page.html.contains("Ada"))

            // The preview across the spring change in Vienna: two a day, and the clock change shows.
            let preview = try await console.post(
                "/console/studies/\(practiceID)/plans",
                Self.fixedTwiceDaily + [
                    ("target", "patient:\(patientID)"), ("action", "preview"), ("previewPatient", patientID.uuidString),
                    ("previewFrom", "2026-03-26"), ("previewDays", "7"),
                ])
            #expect(preview.status == .ok)
            #expect(preview.html.contains("id=\"preview-count\">14<"))
            #expect(preview.html.contains("<tr data-date=\"2026-03-29\" class=\"offset-changed\">"))
            #expect(preview.html.contains("UTC+02:00"))
            #expect(try await app.count("plans") == 0)
            #expect(try await app.count("prompts") == 0)
            #expect(try await app.count("audit_events WHERE action = 'schedule.previewed'") == 1)

            // Refused: no times; nothing stored, the form comes back with the message beside the field.
            let refused = try await console.post(
                "/console/studies/\(practiceID)/plans",
                Self.fixedTwiceDaily.map { $0.0 == "times" ? ("times", "") : $0 } + [("target", "all"), ("action", "attach")])
            #expect(refused.status == .unprocessableEntity)
            #expect(refused.html.contains("id=\"times-error\""))
            #expect(try await app.count("plans") == 0)

            let attached = try await console.post(
                "/console/studies/\(practiceID)/plans",
                Self.fixedTwiceDaily + [("target", "patient:\(patientID)"), ("action", "attach")])
            #expect(attached.status == .seeOther)
            #expect(attached.location == "/console/patients/\(patientID)?planAdded=1")
            let plan = try #require(try await PlanRecord.query(on: app.database).first())
            #expect(plan.$patient.id == patientID)
            #expect(try await app.count("prompts") >= 26)
            #expect(try await app.count("audit_events WHERE action = 'plan.changed'") == 1)
            let patientPage = try await console.get("/console/patients/\(patientID)")
            #expect(patientPage.html.contains("only this patient"))
            #expect(patientPage.html.contains("At 08:30, 20:00, every day"))

            // Removing it takes its future prompts with it.
            let removed = try await console.post("/console/studies/\(practiceID)/plans/\(plan.id!)/delete", [])
            #expect(removed.status == .seeOther)
            #expect(try await app.count("plans") == 0)
            let left = try await PromptRecord.query(on: app.database).all()
            #expect(left.allSatisfy { $0.opensAt <= app.clock.now })
        }
    }

    @Test("plans and schedules are closed to staff of other practices and studies")
    func isolation() async throws {
        try await withTestApp { app in
            let (_, _, patientID, practiceID) = try await practice(app)
            _ = try await app.staff("therapist", "huber@praxis.example")
            let huber = ConsoleBrowser(app)
            _ = try await huber.signIn("huber@praxis.example")
            _ = try await huber.get("/console/patients")
            #expect(try await huber.get("/console/studies/\(practiceID)/plans").status == .notFound)
            let posted = try await huber.post(
                "/console/studies/\(practiceID)/plans", Self.fixedTwiceDaily + [("target", "all"), ("action", "attach")])
            #expect(posted.status == .notFound)
            #expect(try await app.count("plans") == 0)
            #expect(try await huber.get("/console/schedule/\(patientID)").status == .notFound)
            _ = try await app.staff("researcher", "lab@uni.example")
            let lab = ConsoleBrowser(app)
            _ = try await lab.signIn("lab@uni.example")
            #expect(try await lab.get("/console/schedule/\(patientID)").status == .notFound)
            #expect(try await lab.get("/console/studies/\(practiceID)/plans").status == .notFound)
        }
    }

    @Test("the schedule page shows any period in the patient's local time; bad dates are refused")
    func schedulePage() async throws {
        try await withTestApp { app in
            let (console, _, patientID, practiceID) = try await practice(app)
            _ = try await console.post(
                "/console/studies/\(practiceID)/plans", Self.fixedTwiceDaily + [("target", "all"), ("action", "attach")])
            let autumn = try await console.get("/console/schedule/\(patientID)?from=2026-10-24&days=3")
            #expect(autumn.status == .ok)
            #expect(autumn.html.contains("Europe/Vienna"))
            #expect(autumn.html.contains("id=\"preview-count\">6<"))
            #expect(autumn.html.contains("<tr data-date=\"2026-10-25\" class=\"offset-changed\">"))
            #expect(autumn.html.contains("08:30–09:30"))
            #expect(try await app.count("audit_events WHERE action = 'schedule.previewed'") == 1)
            #expect(try await console.get("/console/schedule/\(patientID)?from=2026-13-01").status == .unprocessableEntity)
            #expect(try await console.get("/console/schedule/\(patientID)?days=400").status == .unprocessableEntity)
        }
    }

    @Test("compliance counts answered, missed and open prompts in the caseload")
    func compliance() async throws {
        try await withTestApp { app in
            let (console, _, patientID, practiceID) = try await practice(app)
            let now = app.clock.now
            for (offset, status) in [(-7200.0, PromptStatus.completed), (-7200.0, .scheduled), (-60.0, .scheduled), (3600.0, .scheduled)] {
                let prompt = PromptRecord(
                    patientID: patientID, studyID: practiceID, assignedBy: nil, instrumentKey: "mood-vas",
                    instrumentVersion: 1, opensAt: now.addingTimeInterval(offset),
                    closesAt: now.addingTimeInterval(offset + 3600), source: PromptSource.manual, now: now)
                prompt.status = status
                try await prompt.create(on: app.database)
            }
            let caseload = try await console.get("/console/patients")
            #expect(caseload.html.contains("1 / 1 / 1</span> · 50 %"))
            let page = try await console.get("/console/patients/\(patientID)")
            #expect(page.html.contains("answered <strong>1</strong> · missed <strong>1</strong> · open <strong>1</strong> (50 %)"))
        }
    }

    @Test("the therapist adds an appointment on the patient's page; an off-grid time is refused")
    func appointments() async throws {
        try await withTestApp { app in
            let (console, patient, patientID, _) = try await practice(app)
            let form: [(String, String)] = [("title", "Session"), ("date", "2026-03-10"), ("startTime", "10:00"), ("endTime", "10:50")]
            let offGrid = try await console.post(
                "/console/patients/\(patientID)/appointments", form.map { $0.0 == "startTime" ? ("startTime", "10:03") : $0 })
            #expect(offGrid.status == .unprocessableEntity)
            #expect(offGrid.html.contains("id=\"appointment-start-error\""))
            #expect(try await app.count("appointments") == 0)
            let added = try await console.post("/console/patients/\(patientID)/appointments", form)
            #expect(added.status == .created)
            #expect(added.html.contains("Session"))
            let mine = try await patient.send(.GET, "/me/appointments")
            #expect(mine.body.array.count == 1)
            #expect(mine.body[0]["startsAt"].string == "2026-03-10T09:00:00Z")
        }
    }

    @Test("a researcher sees the study's plans, participants' compliance and schedules; an unknown arm is refused")
    func researcher() async throws {
        try await withTestApp { app in
            let accounts = try await DemoSetup(database: app.database, services: app.app.interlude, logger: app.app.logger)
                .create(.trackYourStress)
            let researcher = try #require(accounts.first { $0.role == .researcher })
            let patient = try #require(accounts.first { $0.role == .patient })
            let patientID = try #require(try await UserRecord.query(on: app.database).filter(\.$email == patient.email).first()?.id)
            let console = ConsoleBrowser(app)
            _ = try await console.signIn(researcher.email, password: researcher.password)
            let study = try #require(try await StudyRecord.query(on: app.database).filter(\.$title == "Track Your Stress").first())
            let studyPage = try await console.get("/console/studies/\(study.id!)")
            #expect(studyPage.html.contains("/console/studies/\(study.id!)/plans"))
            #expect(studyPage.html.contains("/console/schedule/\(patientID)"))
            let plans = try await console.get("/console/studies/\(study.id!)/plans")
            #expect(plans.html.components(separatedBy: "<tr data-plan=").count == 5)
            #expect(plans.html.contains("Every Sunday at 18:00"))
            #expect(plans.html.contains("Monthly on day 1 at 18:00"))
            #expect(plans.html.contains("Once on joining, before repeated ones"))
            #expect(plans.html.contains("adjustable 07:00–22:00, 1–6 a day"))
            let schedule = try await console.get("/console/schedule/\(patientID)?days=7")
            #expect(schedule.status == .ok)
            #expect(schedule.html.contains("Track Your Stress: daily"))
            let unknownArm = try await console.post(
                "/console/studies/\(study.id!)/plans",
                [("instrumentKey", "tys-weekly"), ("kind", "weekly"), ("weekday", "monday"), ("time", "19:00"),
                 ("durationMinutes", "60"), ("target", "arm:B"), ("action", "attach")])
            #expect(unknownArm.status == .unprocessableEntity)
            #expect(unknownArm.html.contains("id=\"target-error\""))
            #expect(try await app.count("plans") == 4)
        }
    }
}
