import Foundation
import Testing
import VaporTesting

@testable import InterludeServer

/// An instrument a study imported is that study's until its owner shares it: other studies neither see it nor use
/// it in prompts, plans or rules.
@Suite("Instruments stay with the study that imported them until shared")
struct InstrumentVisibilityTests {
    /// Two researchers, each with a study; the first imported and published `sleep` for theirs.
    func twoStudies(_ app: TestContext) async throws -> (
        owner: APIClient, ownStudy: String, other: APIClient, otherStudy: String
    ) {
        let (owner, _) = try await app.staff("researcher", "lab@uni.example")
        let (other, _) = try await app.staff("researcher", "other@uni.example")
        let ownStudy = try await StudyAPITests().createStudy(owner, StudyAPITests.study("open"))
        let otherStudy = try await StudyAPITests().createStudy(other, StudyAPITests.study("open"))
        let imported = try await owner.send(
            .POST, "/instruments?publish=true&studyId=\(ownStudy)", json: QuestionnaireAPITests.sleep)
        try #require(imported.status == .created, "\(imported.text)")
        return (owner, ownStudy, other, otherStudy)
    }

    static func plan(_ key: String) -> JSONValue {
        ScheduleAPITests.daily.merging(["instrumentKey": .string(key)])
    }

    static func rule(_ key: String) -> JSONValue {
        [
            "name": "Poor sleep",
            "trigger": [
                "kind": "submitted", "instrumentKey": .string(key), "condition": ["mode": "all", "clauses": []],
            ],
            "action": ["kind": "alert", "priority": "normal", "message": "look"],
        ]
    }

    @Test("another study's researcher neither lists, reads, plans nor names an unshared instrument")
    func hidden() async throws {
        try await withTestApp { app in
            // setup
            let (owner, ownStudy, other, otherStudy) = try await twoStudies(app)
            // act
            let listed = try await other.send(.GET, "/instruments")
            let read = try await other.send(.GET, "/instruments/sleep/versions/1")
            let planned = try await other.send(.POST, "/studies/\(otherStudy)/plans", json: Self.plan("sleep"))
            let ruled = try await other.send(.POST, "/studies/\(otherStudy)/rules", json: Self.rule("sleep"))
            let ownPlan = try await owner.send(.POST, "/studies/\(ownStudy)/plans", json: Self.plan("sleep"))
            // verify
            #expect(!listed.body.array.contains { $0["key"].string == "sleep" })
            #expect(listed.body.array.contains { $0["key"].string == "phq-9" })
            #expect(read.status == .notFound)
            #expect(planned.status == .unprocessableEntity)
            #expect(planned.body.problemFields == ["instrumentKey"])
            #expect(ruled.status == .unprocessableEntity, "\(ruled.text)")
            #expect(ownPlan.status == .created, "\(ownPlan.text)")
            #expect(try await owner.send(.GET, "/instruments").body.array.contains { $0["key"].string == "sleep" })
        }
    }

    @Test(
        "the console offers another study's unshared instrument nowhere: not in the list, the rules form or the plans form"
    )
    func consoleHidden() async throws {
        try await withTestApp { app in
            // setup
            let (_, _, _, otherStudy) = try await twoStudies(app)
            let browser = ConsoleBrowser(app)
            _ = try await browser.signIn("other@uni.example")
            // act
            let pages = [
                try await browser.get("/console/instruments"),
                try await browser.get("/console/studies/\(otherStudy)/rules"),
                try await browser.get("/console/studies/\(otherStudy)/plans"),
                try await browser.get("/console/instruments/sleep/1"),
            ]
            // verify
            #expect(pages[0].status == .ok && pages[1].status == .ok && pages[2].status == .ok)
            #expect(
                pages.prefix(3).allSatisfy {
                    !$0.html.contains("value=\"sleep\"") && !$0.html.contains("/instruments/sleep/")
                })
            #expect(pages[3].status == .notFound)
        }
    }

    @Test("once its owner shares it, every study sees and uses it")
    func shared() async throws {
        try await withTestApp { app in
            // setup
            let (owner, _, other, otherStudy) = try await twoStudies(app)
            // act
            let sharing = try await owner.send(.POST, "/instruments/sleep/sharing")
            let read = try await other.send(.GET, "/instruments/sleep/versions/1")
            let planned = try await other.send(.POST, "/studies/\(otherStudy)/plans", json: Self.plan("sleep"))
            // verify
            #expect(sharing.status == .ok, "\(sharing.text)")
            #expect(read.status == .ok)
            #expect(planned.status == .created, "\(planned.text)")
        }
    }
}
