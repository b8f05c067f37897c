import Fluent
import Foundation
import InterludeCore
import Testing
import VaporTesting

@testable import InterludeServer

/// The health record on the therapist's console: events as a timeline with the questionnaires' scores on the same
/// time axis, therapies with the ongoing ones first, audiograms drawn beside the earlier test with their table.
@Suite("Health record on the console")
struct ConsoleHealthRecordTests {
    typealias Content = HealthRecordPages.Content

    /// A paired patient who answered the PHQ-9 at t0 and eight days later, with an event before, between and after
    /// the answers, an ended and an ongoing therapy, and two audiograms a week apart.
    struct World {
        let therapist: UserRecord
        let chart: PatientChart
        let patientID: UUID
    }

    func world(_ app: TestContext) async throws -> World {
        let questionnaires = QuestionnaireAPITests()
        let (therapistClient, patient, patientID, firstPrompt) = try await questionnaires.setUp(app)
        let t0 = app.clock.now
        func event(_ title: String, _ type: String, hours: Double) async throws {
            let reply = try await patient.send(
                .POST, "/me/events",
                json: [
                    "id": .string(UUID().uuidString), "title": .string(title), "type": .string(type),
                    "occurredAt": QuestionnaireAPITests.iso(t0.addingTimeInterval(hours * 3600)),
                ])
            try #require(reply.status == .created, "\(reply.text)")
        }
        try await event("Loud concert", "tinnitusAttack", hours: -48)
        let first = try await patient.send(
            .POST, "/me/responses",
            json: questionnaires.submission(firstPrompt, answers: QuestionnaireAPITests.noSymptoms, completedAt: t0))
        try #require(first.status == .created, "\(first.text)")
        try await event("ENT visit", "appointment", hours: 4 * 24)
        app.clock.advance(by: 8 * 86_400)
        let second = try await therapistClient.send(
            .POST, "/patients/\(patientID.uuidString)/prompts",
            json: [
                "instrumentKey": "phq-9", "opensAt": QuestionnaireAPITests.iso(app.clock.now),
                "closesAt": QuestionnaireAPITests.iso(app.clock.now.addingTimeInterval(86_400)),
            ])
        let secondID = try second.decoded(Components.Schemas.Prompt.self).id
        let answered = try await patient.send(
            .POST, "/me/responses",
            json: questionnaires.submission(
                secondID, answers: QuestionnaireAPITests.moderate, completedAt: app.clock.now))
        try #require(answered.status == .created, "\(answered.text)")
        try await event("Sleepless week", "mentalIllness", hours: 8 * 24 + 2)
        for (name, type, start, end) in [
            ("Cortisone", "medicalTreatment", "2026-01-10", "2026-01-20"),
            ("Hearing aid", "hearingAid", "2026-03-01", ""),
        ] {
            let reply = try await patient.send(
                .POST, "/me/therapies",
                json: [
                    "id": .string(UUID().uuidString), "name": .string(name), "type": .string(type),
                    "startDate": .string(start),
                    "endDate": end.isEmpty ? .absent : .string(end),
                ])
            try #require(reply.status == .created, "\(reply.text)")
        }
        for (days, shift) in [(-7.0, 0), (0.0, 10)] {
            let reply = try await patient.send(
                .POST, "/me/audiograms",
                json: AudiogramAPITests.body(app, at: app.clock.now.addingTimeInterval(days * 86_400), shift: shift))
            try #require(reply.status == .created, "\(reply.text)")
        }
        let therapist = try #require(
            try await UserRecord.query(on: app.database).filter(\.$email == "berger@praxis.example").first())
        let chart = try await PatientChart.open(
            patientID, for: therapist, database: app.database, services: app.app.interlude)
        return World(therapist: therapist, chart: chart, patientID: patientID)
    }

    func content(_ world: World, _ app: TestContext) async throws -> Content {
        try await HealthRecordPages(viewer: world.therapist, database: app.database, services: app.app.interlude)
            .record(world.chart)
    }

    /// The x of every match of `pattern`'s first capture in the SVG, in order.
    func positions(_ pattern: String, in svg: String) throws -> [Double] {
        try svg.matches(of: Regex(pattern)).compactMap { match in
            (match.output[1].substring).flatMap { Double(String($0)) }
        }
    }

    @Test("the events lie on the score chart's time axis where they happened: before, between and after the answers")
    func eventsOnTheScoreAxis() async throws {
        try await withTestApp { app in
            // setup
            let world = try await world(app)

            // act
            let content = try await content(world, app)

            // verify
            #expect(content.events.map(\.title) == ["Sleepless week", "ENT visit", "Loud concert"])
            #expect(content.events.map(\.type) == ["Mental illness", "Appointment", "Tinnitus attack"])
            let chart = try #require(content.charts.first)
            let events = try positions(#"<g class="event-marker">.*?<line x1="([0-9.]+)""#, in: chart.svg)
            let answers = try positions(#"<circle cx="([0-9.]+)""#, in: chart.svg)
            #expect(events.count == 3 && answers.count == 2)
            guard events.count == 3, answers.count == 2 else { return }
            // The concert came first (the axis starts there), the ENT visit between the answers, the week after both.
            #expect(
                events[0] < answers[0] && answers[0] < events[1] && events[1] < answers[1] && answers[1] < events[2])
            #expect(chart.svg.contains("3 events marked."))
            #expect(chart.svg.contains("Tinnitus attack: Loud concert"))
        }
    }

    @Test("therapies come ongoing first; audiograms newest first, each drawn against the one before, with its table")
    func therapiesAndAudiograms() async throws {
        try await withTestApp { app in
            // setup
            let world = try await world(app)

            // act
            let content = try await content(world, app)

            // verify
            #expect(content.therapies.map(\.name) == ["Hearing aid", "Cortisone"])
            #expect(content.therapies.map(\.ongoing) == [true, false])
            #expect(content.therapies.map(\.type) == ["Hearing aid", "Medical treatment"])
            #expect(content.audiograms.count == 2)
            let newest = try #require(content.audiograms.first)
            #expect(newest.svg.contains("compared with"))
            #expect(content.audiograms.last?.svg.contains("compared with") == false)
            #expect(
                newest.columns == [
                    "Right ear, air conduction", "Left ear, air conduction", "Right ear, bone conduction",
                    "Left ear, bone conduction",
                ])
            let row4k = try #require(newest.rows.first { $0.frequency == "4000 Hz" })
            #expect(row4k.levels == ["45", "60", "", ""])
            let row8k = try #require(newest.rows.first { $0.frequency == "8000 Hz" })
            #expect(row8k.levels[1] == "no response")
            let row1k = try #require(newest.rows.first { $0.frequency == "1000 Hz" })
            #expect(row1k.levels[3] == "30 (masked)")
        }
    }

    @Test("the page is reached from the patient's page, reading it is in the patient's access log, and it prints")
    func pageAndAudit() async throws {
        try await withTestApp { app in
            // setup
            let (console, patient, patientID, _) = try await ConsoleScheduleTests().practice(app)
            let audiogram = try await patient.send(.POST, "/me/audiograms", json: AudiogramAPITests.body(app))
            try #require(audiogram.status == .created)

            // act
            let patientPage = try await console.get("/console/patients/\(patientID)")
            let page = try await console.get("/console/patients/\(patientID)/record")

            // verify
            #expect(patientPage.html.contains("href=\"/console/patients/\(patientID.uuidString)/record\""))
            #expect(page.status == .ok)
            #expect(page.html.contains("<svg") && page.html.contains("No events recorded."))
            #expect(page.html.contains("class=\"no-print\""))
            let reads = try await AuditEventRecord.query(on: app.database).filter(
                \.$action == AuditAction.recordsRead.rawValue
            ).all()
            #expect(Set(reads.compactMap(\.target)) == ["events", "therapies", "audiograms"])
        }
    }

    @Test("the health record page as a therapist reads it")
    func snapshot() async throws {
        try await withTestApp { app in
            // setup
            let world = try await world(app)

            // act
            let html = try await SnapshotTests.render(
                "console/health-record", try await content(world, app), for: world.therapist, app)

            // verify
            try SnapshotTests.expectSnapshot(html, named: "console-health-record.html")
        }
    }
}
