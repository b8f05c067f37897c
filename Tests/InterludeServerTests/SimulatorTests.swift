import Fluent
import Foundation
import InterludeCore
import InterludeSimulator
import Testing
import VaporTesting

@testable import InterludeServer

/// The simulator's clock is the test server's: moving it on also runs the server's planner, as its background job would.
struct ServerClock: SimulationClock {
    let context: TestContext

    func now() async -> Date { context.clock.now }

    func advance(to instant: Date) async throws {
        let step = instant.timeIntervalSince(context.clock.now)
        if step > 0 { context.clock.advance(by: step) }
        _ = try await Planner(database: context.database, services: context.app.interlude).runAll(
            now: context.clock.now)
    }
}

@Suite("interlude-sim against a running server")
struct SimulatorTests {
    @Test("50 participants for two simulated days: the server's compliance is the simulator's own count")
    func fiftyParticipantsTwoDays() async throws {
        try await withTestApp { app in
            let (researcher, _) = try await app.staff("researcher", "lead@uni.example")
            let study = try await StudyAPITests().createStudy(researcher, StudyAPITests.study("open"))
            let plan = try await researcher.send(
                .POST, "/studies/\(study)/plans",
                json: [
                    "instrumentKey": "mood-vas", "durationMinutes": 120,
                    "pattern": ["kind": "fixedTimes", "times": ["09:30", "13:00", "17:00", "21:00"]],
                ])
            try #require(plan.status == .created, "\(plan.text)")
            let settings = try await researcher.send(
                .PUT, "/studies/\(study)/record-settings",
                json: [
                    "collects": ["thought"], "eventTypes": [],
                    "sampleTypes": [["type": "heartRate", "purpose": "To relate it to your mood."]],
                ])
            try #require(settings.status == .ok, "\(settings.text)")
            try await withListeningServer(app) { url in
                var configuration = Simulation.Configuration(
                    serverURL: url, participants: 50, duration: 2 * 86_400, step: 3600, seed: 7,
                    accounts: .register(prefix: "sim", domain: "example.org", password: TestContext.password) { email in
                        try #require(app.mailer.token(for: "/app/verify", to: email))
                    },
                    enrolment: .join(study: UUID(uuidString: study)!, consentVersion: "2026-1", modules: [:]))
                configuration.distinctAddresses = true
                configuration.recordsPerDay = 2
                configuration.syncInterval = 4 * 3600
                let tally = try await Simulation(configuration).run(clock: ServerClock(context: app))

                #expect(tally.participants.count == 50)
                // Two days of four prompts, some answered, some let pass, some answered offline and sent later.
                #expect(tally.answered > 200 && tally.missed > 10, "\(tally.answered) answered, \(tally.missed) missed")
                #expect(tally.refused == 0)
                #expect(tally.offlinePeriods > 0)
                let thoughts = tally.participants.reduce(0) { $0 + $1.thoughts }
                let occurrences = try await EntryRecord.query(on: app.database).filter(\.$kind == .thoughtOccurrence)
                    .count()
                #expect(occurrences == thoughts && thoughts > 0)
                #expect(try await app.count("samples") == tally.participants.reduce(0) { $0 + $1.samples })
                let prompts = PromptService(database: app.database, services: app.app.interlude)
                for participant in tally.participants {
                    let user = try #require(
                        try await UserRecord.query(on: app.database).filter(\.$email == participant.email).first())
                    let compliance = try #require(
                        try await prompts.compliance(of: [try user.requireID()], studies: [UUID(uuidString: study)!])
                            .values.first)
                    #expect(compliance.completed == participant.answered, "\(participant.email)")
                    #expect(compliance.expired == participant.missed, "\(participant.email)")
                }
            }
        }
    }
}
