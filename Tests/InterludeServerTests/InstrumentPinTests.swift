import Fluent
import Foundation
import Testing
import VaporTesting

@testable import InterludeServer

/// A study answers the version of an instrument it started with: a newer version published later reaches its
/// participants only when the study's staff move it there.
@Suite("Studies keep the instrument version they pinned")
struct InstrumentPinTests {
    /// A research study with one participant and a daily plan of its own `sleep` instrument, version 1.
    func planned(_ app: TestContext) async throws -> (researcher: APIClient, studyID: String) {
        let (researcher, _) = try await app.staff("researcher", "lab@uni.example")
        let (patient, _) = try await app.patient(name: "Ada")
        let studyID = try await StudyAPITests().createStudy(researcher, StudyAPITests.study("open"))
        _ = try await researcher.send(
            .POST, "/instruments?publish=true&studyId=\(studyID)", json: QuestionnaireAPITests.sleep)
        let joined = try await patient.send(.POST, "/studies/\(studyID)/enrollment", json: ["consentVersion": "2026-1"])
        try #require(joined.status == .created, "\(joined.text)")
        let plan = try await researcher.send(
            .POST, "/studies/\(studyID)/plans", json: InstrumentVisibilityTests.plan("sleep"))
        try #require(plan.status == .created, "\(plan.text)")
        return (researcher, studyID)
    }

    /// The versions of `sleep` the study's prompts use.
    func promptVersions(_ app: TestContext) async throws -> Set<Int> {
        Set(
            try await PromptRecord.query(on: app.database).filter(\.$instrumentKey == "sleep").all().map(
                \.instrumentVersion))
    }

    @Test("a version published after the study started does not reach it; its plans keep planning the pinned one")
    func keeps() async throws {
        try await withTestApp { app in
            // setup
            let (researcher, studyID) = try await planned(app)
            // act
            let next = try await researcher.send(
                .POST, "/instruments?publish=true&studyId=\(studyID)", json: QuestionnaireAPITests.sleep)
            let second = try await researcher.send(
                .POST, "/studies/\(studyID)/plans", json: InstrumentVisibilityTests.plan("sleep"))
            let pins = try await researcher.send(.GET, "/studies/\(studyID)/instrument-pins")
            // verify
            #expect(next.body["version"].int == 2)
            #expect(second.status == .created)
            #expect(try await promptVersions(app) == [1])
            #expect(pins.body.array.count == 1)
            #expect(pins.body[0]["instrumentKey"].string == "sleep")
            #expect(pins.body[0]["version"].int == 1)
            #expect(pins.body[0]["newestVersion"].int == 2)
        }
    }

    @Test("the study's staff move it to the newer version; its next prompts use it, planned ones keep theirs")
    func moves() async throws {
        try await withTestApp { app in
            // setup
            let (researcher, studyID) = try await planned(app)
            _ = try await researcher.send(
                .POST, "/instruments?publish=true&studyId=\(studyID)", json: QuestionnaireAPITests.sleep)
            let (stranger, _) = try await app.staff("researcher", "other@uni.example")
            // act
            let foreign = try await stranger.send(
                .PUT, "/studies/\(studyID)/instrument-pins/sleep", json: ["version": 2])
            let unknown = try await researcher.send(
                .PUT, "/studies/\(studyID)/instrument-pins/sleep", json: ["version": 99])
            let moved = try await researcher.send(
                .PUT, "/studies/\(studyID)/instrument-pins/sleep", json: ["version": 2])
            let plan = try await researcher.send(
                .POST, "/studies/\(studyID)/plans", json: InstrumentVisibilityTests.plan("sleep"))
            // verify
            #expect(foreign.status == .notFound)
            #expect(unknown.status == .notFound)
            #expect(moved.status == .ok, "\(moved.text)")
            #expect(moved.body["version"].int == 2)
            #expect(plan.status == .created)
            #expect(try await promptVersions(app) == [1, 2])
            let audited = try await AuditEventRecord.query(on: app.database)
                .filter(\.$action == AuditAction.instrumentPinMoved.rawValue).count()
            #expect(audited == 1)
        }
    }

    @Test("a draft cannot be pinned")
    func draftRefused() async throws {
        try await withTestApp { app in
            // setup
            let (researcher, studyID) = try await planned(app)
            let draft = try await researcher.send(
                .POST, "/instruments?studyId=\(studyID)", json: QuestionnaireAPITests.sleep)
            // act
            let refused = try await researcher.send(
                .PUT, "/studies/\(studyID)/instrument-pins/sleep",
                json: ["version": .int(draft.body["version"].int ?? 0)])
            // verify
            #expect(draft.body["status"].string == "draft")
            #expect(refused.status == .unprocessableEntity)
            #expect(refused.body.problemFields == ["version"])
        }
    }

    @Test("the console offers the move on the newer version's page, to the studies the person manages")
    func console() async throws {
        try await withTestApp { app in
            // setup
            let (researcher, studyID) = try await planned(app)
            _ = try await researcher.send(
                .POST, "/instruments?publish=true&studyId=\(studyID)", json: QuestionnaireAPITests.sleep)
            let browser = ConsoleBrowser(app)
            _ = try await browser.signIn("lab@uni.example")
            // act
            let page = try await browser.get("/console/instruments/sleep/2")
            let moved = try await browser.post("/console/instruments/sleep/2/pin", [("study", studyID)])
            let after = try await browser.get("/console/instruments/sleep/2")
            // verify
            #expect(page.html.contains("action=\"/console/instruments/sleep/2/pin\""))
            #expect(moved.status == .seeOther)
            #expect(!after.html.contains("action=\"/console/instruments/sleep/2/pin\""))
            let pin = try await researcher.send(.GET, "/studies/\(studyID)/instrument-pins")
            #expect(pin.body[0]["version"].int == 2)
        }
    }

    @Test("studies that used instruments before pins existed are pinned to the newest version their prompts use")
    func migrationSeeds() async throws {
        try await withTestApp { app in
            // setup: a study whose prompts use sleep 1 while sleep 2 is published, and no pins yet
            let (researcher, studyID) = try await planned(app)
            _ = try await researcher.send(
                .POST, "/instruments?publish=true&studyId=\(studyID)", json: QuestionnaireAPITests.sleep)
            let migration = CreateInstrumentPins(clock: app.app.interlude.clock)
            try await migration.revert(on: app.database)
            // act
            try await migration.prepare(on: app.database)
            // verify
            let pins = try await researcher.send(.GET, "/studies/\(studyID)/instrument-pins")
            #expect(pins.body.array.count == 1)
            #expect(pins.body[0]["version"].int == 1)
        }
    }
}
