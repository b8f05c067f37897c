import Fluent
import Foundation
import InterludeCore
import Testing
import VaporTesting

@testable import InterludeServer

/// A client's treatment as their therapist keeps it: the name they are shown under and the therapy's dates, which
/// plans anchored on the therapy's start follow.
@Suite("Treatment: display name and therapy dates")
struct TreatmentTests {
    /// A practice's plan anchored on one of the therapy's dates, its therapist and paired client, and the client's
    /// scheduled prompts of the plan's instrument as local times.
    struct AnchoredPlan {
        let therapist: APIClient
        let patientID: UUID
        let today: LocalDate
        let planned: () async throws -> [String]
    }

    static func anchoredPlan(_ app: TestContext, anchor: String, instrumentKey: String, offsets: JSONValue) async throws
        -> AnchoredPlan
    {
        let (therapist, therapistID) = try await app.staff("therapist", "tess@example.org")
        let (patient, patientID) = try await app.patient("ada@example.org", name: "Ada Lovelace")
        try await app.pair(patient, with: therapist)
        let practice = try #require(
            try await StudyRecord.query(on: app.database).filter(\.$owner.$id == therapistID).first()?.id)
        let plan = try await therapist.send(
            .POST, "/studies/\(practice)/plans",
            json: [
                "instrumentKey": .string(instrumentKey), "durationMinutes": 60,
                "pattern": ["kind": "relative", "anchor": .string(anchor), "offsets": offsets, "time": "10:00"],
            ])
        try #require(plan.status == .created, "\(plan.text)")
        let zone = TimeZone(identifier: "Europe/Vienna")!
        return AnchoredPlan(therapist: therapist, patientID: patientID, today: LocalDate(app.clock.now, in: zone)) {
            try await PromptRecord.query(on: app.database).filter(\.$patient.$id == patientID)
                .filter(\.$status == .scheduled).filter(\.$instrumentKey == instrumentKey).sort(\.$opensAt).all()
                .map { LocalDateTime($0.opensAt, in: zone).description }
        }
    }

    @Test(
        "setting the therapy's start makes a plan anchored on it fire, and moving it moves the prompts; wrong dates are named"
    )
    func therapyStart() async throws {
        try await withTestApp { app in
            // setup
            let anchored = try await Self.anchoredPlan(
                app, anchor: "therapyStart", instrumentKey: "mood-vas", offsets: [0, 2])
            let (therapist, patientID, today, planned) = (
                anchored.therapist, anchored.patientID, anchored.today, anchored.planned
            )
            let (other, _) = try await app.staff("therapist", "otto@example.org")
            let before = try await planned()

            // act
            let started = try await therapist.send(
                .PATCH, "/patients/\(patientID)",
                json: [
                    "therapyStart": .string(today.adding(days: 1).description), "displayName": "Ada L.",
                ])
            let afterStart = try await planned()
            let moved = try await therapist.send(
                .PATCH, "/patients/\(patientID)", json: ["therapyStart": .string(today.adding(days: 3).description)])
            let afterMove = try await planned()
            let backwards = try await therapist.send(
                .PATCH, "/patients/\(patientID)", json: ["therapyEnd": .string(today.description)])
            let malformed = try await therapist.send(
                .PATCH, "/patients/\(patientID)",
                json: ["therapyStart": "next Monday", "displayName": .string(String(repeating: "x", count: 121))])
            let stranger = try await other.send(.PATCH, "/patients/\(patientID)", json: ["displayName": "Mine"])
            let cleared = try await therapist.send(
                .PATCH, "/patients/\(patientID)",
                json: ["displayName": "", "therapyEnd": .string(today.adding(days: 60).description)])
            let listed = try await therapist.send(.GET, "/patients").decoded([Components.Schemas.CaseloadPatient].self)

            // verify
            #expect(before.isEmpty, "nothing fires before the therapy has a start")
            #expect(
                started.status == .ok && started.body["displayName"].string == "Ada L."
                    && started.body["therapyStart"].string == today.adding(days: 1).description)
            #expect(afterStart == ["\(today.adding(days: 1))T10:00", "\(today.adding(days: 3))T10:00"])
            #expect(
                moved.status == .ok
                    && afterMove == ["\(today.adding(days: 3))T10:00", "\(today.adding(days: 5))T10:00"])
            #expect(backwards.status == .unprocessableEntity && backwards.body.problemFields == ["therapyEnd"])
            #expect(Set(malformed.body.problemFields) == ["therapyStart", "displayName"])
            #expect(stranger.status == .notFound)
            #expect(
                cleared.status == .ok && cleared.body["displayName"].isNull
                    && cleared.body["therapyEnd"].string == today.adding(days: 60).description)
            #expect(
                listed.first?.therapyStart == today.adding(days: 3).description && listed.first?.name == "Ada Lovelace")
            let audited = try await AuditEventRecord.query(on: app.database).filter(
                \.$action == AuditAction.treatmentChanged.rawValue
            ).count()
            #expect(audited == 3)
        }
    }

    @Test(
        "a plan anchored on the therapy's end gives the post measurement on its last day and a follow-up after, and follows the end when it moves"
    )
    func therapyEnd() async throws {
        try await withTestApp { app in
            // setup
            let anchored = try await Self.anchoredPlan(
                app, anchor: "therapyEnd", instrumentKey: "phq-9", offsets: [0, 7])
            let (therapist, patientID, today, planned) = (
                anchored.therapist, anchored.patientID, anchored.today, anchored.planned
            )
            let before = try await planned()

            // act
            let started = try await therapist.send(
                .PATCH, "/patients/\(patientID)", json: ["therapyStart": .string(today.adding(days: -30).description)])
            let onlyStart = try await planned()
            let ending = try await therapist.send(
                .PATCH, "/patients/\(patientID)", json: ["therapyEnd": .string(today.adding(days: 2).description)])
            let afterEnd = try await planned()
            let later = try await therapist.send(
                .PATCH, "/patients/\(patientID)", json: ["therapyEnd": .string(today.adding(days: 4).description)])
            let afterMove = try await planned()
            let cleared = try await therapist.send(.PATCH, "/patients/\(patientID)", json: ["therapyEnd": ""])
            let afterClear = try await planned()

            // verify
            #expect(before.isEmpty && onlyStart.isEmpty, "nothing fires before the therapy has an end")
            #expect(started.status == .ok && ending.status == .ok && later.status == .ok && cleared.status == .ok)
            #expect(afterEnd == ["\(today.adding(days: 2))T10:00", "\(today.adding(days: 9))T10:00"])
            #expect(afterMove == ["\(today.adding(days: 4))T10:00", "\(today.adding(days: 11))T10:00"])
            #expect(afterClear.isEmpty)
        }
    }

    @Test(
        "on the console the therapist names the client and sets the therapy's dates; an end before the start is named beside it"
    )
    func console() async throws {
        try await withTestApp { app in
            // setup
            let (console, _, patientID, _) = try await ConsoleScheduleTests().practice(app)

            // act
            let refused = try await console.post(
                "/console/patients/\(patientID)/treatment",
                [("displayName", "Ada B."), ("therapyStart", "2026-04-01"), ("therapyEnd", "2026-03-01")])
            let saved = try await console.post(
                "/console/patients/\(patientID)/treatment",
                [("displayName", "Ada B."), ("therapyStart", "2026-04-01"), ("therapyEnd", "")])
            let caseload = try await console.get("/console/patients")
            let paused = try await console.post("/console/patients/\(patientID)/treatment", [("status", "paused")])
            let unconfirmed = try await console.post("/console/patients/\(patientID)/treatment", [("status", "ended")])
            let ended = try await console.post(
                "/console/patients/\(patientID)/treatment", [("status", "ended"), ("confirmEnd", "yes")])
            let endedList = try await console.get("/console/patients?status=ended")

            // verify
            #expect(refused.status == .unprocessableEntity && refused.html.contains("id=\"therapyEnd-error\""))
            #expect(refused.html.contains("value=\"2026-03-01\""), "the form keeps what was entered")
            #expect(
                saved.status == .ok && saved.html.contains("value=\"2026-04-01\"") && saved.html.contains("<h1>")
                    && saved.html.contains("Ada B."))
            #expect(caseload.html.contains("Ada B."))
            #expect(
                paused.status == .ok && paused.html.contains("data-treatment-status=\"paused\"")
                    && paused.html.contains("value=\"active\""))
            #expect(unconfirmed.status == .unprocessableEntity && unconfirmed.html.contains("id=\"confirmEnd-error\""))
            #expect(
                ended.status == .ok && ended.html.contains("data-treatment-status=\"ended\"")
                    && !ended.html.contains("name=\"confirmEnd\""))
            #expect(endedList.html.contains("Ada B.") && endedList.html.contains("data-status=\"ended\""))
            let profile = try #require(
                try await PatientProfileRecord.query(on: app.database).filter(\.$user.$id == patientID).first())
            #expect(profile.therapyStart == "2026-04-01")
            #expect(
                profile.therapyEnd == LocalDate(app.clock.now, in: TimeZone(identifier: "Europe/Vienna")!).description,
                "ending sets the last day")
        }
    }

    @Test(
        "pausing takes back what has not opened and plans nothing until resumed; ending keeps the history readable, refuses acting and frees the client to pair again"
    )
    func pauseAndEnd() async throws {
        try await withTestApp { app in
            // setup
            let (therapist, therapistID) = try await app.staff("therapist", "tess@example.org")
            let (patient, patientID) = try await app.patient("ada@example.org", name: "Ada Lovelace")
            try await app.pair(patient, with: therapist)
            let practice = try #require(
                try await StudyRecord.query(on: app.database).filter(\.$owner.$id == therapistID).first()?.id)
            let plan = try await therapist.send(
                .POST, "/studies/\(practice)/plans", json: ScheduleAPITests.fixedTimes(["09:00", "18:00"]))
            try #require(plan.status == .created, "\(plan.text)")
            let later = app.clock.now.addingTimeInterval(3 * 86_400)
            let assigned = try await therapist.send(
                .POST, "/patients/\(patientID)/prompts",
                json: [
                    "instrumentKey": "phq-9", "opensAt": QuestionnaireAPITests.iso(later),
                    "closesAt": QuestionnaireAPITests.iso(later.addingTimeInterval(86_400)),
                ])
            try #require(assigned.status == .created, "\(assigned.text)")
            func waiting() async throws -> Int {
                try await PromptRecord.query(on: app.database).filter(\.$patient.$id == patientID).filter(
                    \.$status == .scheduled
                )
                .filter(\.$opensAt > app.clock.now).count()
            }
            let planned = try await waiting()

            // act
            let paused = try await therapist.send(.PATCH, "/patients/\(patientID)", json: ["status": "paused"])
            let whilePaused = try await waiting()
            let stillPaused = try await Planner(database: app.database, services: app.app.interlude).run(
                now: app.clock.now, patients: [patientID])
            let resumed = try await therapist.send(.PATCH, "/patients/\(patientID)", json: ["status": "active"])
            let afterResume = try await waiting()
            let unknown = try await therapist.send(.PATCH, "/patients/\(patientID)", json: ["status": "finished"])
            let ended = try await therapist.send(.PATCH, "/patients/\(patientID)", json: ["status": "ended"])
            let afterEnd = try await waiting()
            let reopened = try await therapist.send(.PATCH, "/patients/\(patientID)", json: ["status": "active"])
            let history = try await therapist.send(.GET, "/patients/\(patientID)/prompts")
            let acting = try await therapist.send(
                .POST, "/patients/\(patientID)/thoughts", json: ["text": "I am not enough"])
            let listed = try await therapist.send(.GET, "/patients?status=ended").decoded(
                [Components.Schemas.CaseloadPatient].self)
            let current = try await therapist.send(.GET, "/patients?status=active").decoded(
                [Components.Schemas.CaseloadPatient].self)
            let ownView = try await patient.send(.GET, "/me/therapist")
            try await app.pair(patient, with: therapist)
            let again = try await therapist.send(.GET, "/patients/\(patientID)")

            // verify
            #expect(planned > 2, "the plan and the assigned prompt wait")
            #expect(paused.status == .ok && paused.body["status"].string == "paused", "\(paused.text)")
            #expect(whilePaused == 0 && stillPaused.created == 0, "nothing waits or is planned while paused")
            #expect(
                resumed.body["status"].string == "active" && afterResume == planned - 1,
                "the plan comes back; the withdrawn assignment stays withdrawn")
            #expect(unknown.status == .unprocessableEntity && unknown.body.problemFields == ["status"])
            #expect(
                ended.status == .ok && ended.body["status"].string == "ended" && ended.body["therapyEnd"].string != nil)
            #expect(afterEnd == 0)
            #expect(reopened.status == .conflict && reopened.body["type"].string == "/problems/treatment-ended")
            #expect(
                history.status == .ok && history.body.array.contains { $0["status"].string == "cancelled" },
                "the history stays readable")
            let withdrawn = try await PromptRecord.query(on: app.database).filter(\.$status == .cancelled).all()
            #expect(withdrawn.map(\.cancelReason) == [.paused], "withdrawn while paused, and the prompt says so")
            #expect(acting.status == .conflict)
            #expect(
                listed.map(\.id) == [patientID.uuidString.lowercased()] && listed.first?.status == .ended
                    && current.isEmpty)
            #expect(ownView.status == .notFound, "the client is no longer paired: \(ownView.text)")
            #expect(
                again.status == .ok && again.body["status"].string == "active",
                "paired again, the new treatment is the one seen")
        }
    }

    @Test(
        "a treatment that ended shows its former therapist only what was made before its end, also once the client pairs elsewhere; the client ends even that"
    )
    func endedTreatmentScope() async throws {
        try await withTestApp { app in
            // setup: Ada keeps a diary with Tess, who ends the treatment; an hour later Ada pairs with Uma and goes on
            let (tess, _) = try await app.staff("therapist", "tess@example.org")
            let (uma, _) = try await app.staff("therapist", "uma@example.org")
            let (ada, adaID) = try await app.patient("ada@example.org", name: "Ada Lovelace")
            try await app.pair(ada, with: tess)
            try #require(
                try await ada.send(.POST, "/me/moods", json: MoodAPITests.mood(app, note: "BEFORE-END mood")).status
                    == .created)
            try #require(
                try await ada.send(
                    .POST, "/me/thoughts/occurrences", json: ThoughtAPITests.occurrence(app, text: "BEFORE-END thought")
                ).status == .created)
            let ended = try await tess.send(.PATCH, "/patients/\(adaID)", json: ["status": "ended"])
            try #require(ended.status == .ok, "\(ended.text)")
            app.clock.advance(by: 3600)
            try await app.pair(ada, with: uma)
            try #require(
                try await ada.send(
                    .POST, "/me/moods", json: MoodAPITests.mood(app, hoursAgo: 0, note: "AFTER-END mood")
                ).status == .created)
            try #require(
                try await ada.send(
                    .POST, "/me/thoughts/occurrences",
                    json: ThoughtAPITests.occurrence(app, text: "BEFORE-END thought", hoursAgo: 0)
                ).status == .created)
            try #require(
                try await ada.send(
                    .POST, "/me/thoughts/occurrences",
                    json: ThoughtAPITests.occurrence(app, text: "AFTER-END thought", hoursAgo: 0)
                ).status == .created)
            try #require(
                try await ada.send(.POST, "/me/events", json: RecordAPITests.event(app, title: "AFTER-END event"))
                    .status == .created)
            let session = ScheduleAPITests.appointment(
                "AFTER-END session", at: app.clock.now.addingTimeInterval(2 * 86_400))
            try #require(try await uma.send(.POST, "/patients/\(adaID)/appointments", json: session).status == .created)

            // act
            let reads = ["moods", "thoughts", "events", "appointments"]
            var tessSees: [String: String] = [:]
            for read in reads { tessSees[read] = try await tess.send(.GET, "/patients/\(adaID)/\(read)").text }
            let occurrences =
                try await tess.send(.GET, "/patients/\(adaID)/thoughts").body.array.first?["occurrences"].array ?? []
            let umaThoughts = try await uma.send(.GET, "/patients/\(adaID)/thoughts").text
            let console = ConsoleBrowser(app)
            _ = try await console.signIn("tess@example.org")
            let chart = try await console.get("/console/patients/\(adaID)")
            let kept = try await app.count("records")
            let treatments = try await ada.send(.GET, "/me/treatments")
            let tessTreatment = try #require(
                treatments.body.array.first { $0["status"].string == "ended" }?["id"].string)
            let umaTreatment = try #require(
                treatments.body.array.first { $0["status"].string == "active" }?["id"].string)
            let ongoing = try await ada.send(.DELETE, "/me/treatments/\(umaTreatment)/access")
            let stranger = try await app.patient("cleo@example.org").client.send(
                .DELETE, "/me/treatments/\(tessTreatment)/access")
            let closed = try await ada.send(.DELETE, "/me/treatments/\(tessTreatment)/access")
            let afterClose = try await tess.send(.GET, "/patients/\(adaID)")
            let caseload = try await tess.send(.GET, "/patients?status=ended").body.array
            let listedAfter = try await ada.send(.GET, "/me/treatments").body.array

            // verify
            #expect(tessSees["moods"]?.contains("BEFORE-END mood") == true)
            #expect(tessSees["thoughts"]?.contains("BEFORE-END thought") == true)
            for (read, text) in tessSees {
                #expect(!text.contains("AFTER-END"), "\(read) shows the former therapist what came after the end")
            }
            #expect(occurrences.count == 1, "the thought's later occurrence stays out")
            #expect(umaThoughts.contains("AFTER-END thought"))
            #expect(chart.status == .ok && !chart.html.contains("AFTER-END") && chart.html.contains("Ada"))
            #expect(treatments.body.array.count == 2)
            #expect(treatments.body.array.first { $0["id"].string == tessTreatment }?["formerAccess"].bool == true)
            #expect(ongoing.status == .conflict && ongoing.body["type"].string == "/problems/treatment-ongoing")
            #expect(stranger.status == .notFound)
            #expect(closed.status == .noContent, "\(closed.text)")
            #expect(afterClose.status == .notFound)
            #expect(caseload.isEmpty)
            #expect(listedAfter.first { $0["id"].string == tessTreatment }?["formerAccess"].bool == false)
            #expect(try await app.count("records") == kept, "nothing was erased")
        }
    }
}
