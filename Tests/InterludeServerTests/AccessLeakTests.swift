import Fluent
import Foundation
import InterludeCore
import Testing
import VaporTesting

@testable import InterludeServer

/// The leaks a review found, each closed: what a patient answers in a research study is not their therapist's,
/// a practice's answers are not research's, and a participant who does not share with research keeps their data.
@Suite("Access: the findings of the review stay closed")
struct AccessLeakTests {
    static let phqRule: JSONValue = [
        "name": "Any PHQ-9",
        "trigger": ["kind": "submitted", "instrumentKey": "phq-9", "condition": ["mode": "all", "clauses": []]],
        "action": ["kind": "alert", "priority": "normal", "message": "look"],
    ]

    @Test("a therapist reads a patient's practice prompts and responses, never those of a research study")
    func therapistSeesPracticeOnly() async throws {
        try await withTestApp { app in
            // setup
            let world = try await AccessWorld.build(app)
            let ada = world.ada
            // act
            let responses = try await world.ownTherapist.send(.GET, "/patients/\(ada.id)/responses")
            let prompts = try await world.ownTherapist.send(.GET, "/patients/\(ada.id)/prompts")
            let interventions = try await world.ownTherapist.send(.GET, "/patients/\(ada.id)/interventions")
            // verify
            #expect(responses.body.array.compactMap { $0["id"].string } == [ada.practiceResponse])
            #expect(prompts.body.array.compactMap { $0["id"].string }.contains(ada.practicePrompt))
            #expect(!prompts.text.contains(ada.researchPrompt))
            #expect(interventions.body.array.compactMap { $0["id"].string } == [ada.practiceIntervention])
        }
    }

    @Test(
        "one response is read by its own therapist only when it was given in the practice",
        arguments: ["", "?format=fhir"])
    func singleResponse(format: String) async throws {
        try await withTestApp { app in
            let world = try await AccessWorld.build(app)
            let practice = try await world.ownTherapist.send(.GET, "/responses/\(world.ada.practiceResponse)\(format)")
            let research = try await world.ownTherapist.send(.GET, "/responses/\(world.ada.researchResponse)\(format)")
            #expect(practice.status == .ok)
            #expect(research.status == .notFound)
            #expect(try await world.ada.client.send(.GET, "/responses/\(world.ada.researchResponse)\(format)").status == .ok)
        }
    }

    @Test("the console's direct response addresses of a research answer are not found for the therapist")
    func consoleResponse() async throws {
        try await withTestApp { app in
            let world = try await AccessWorld.build(app)
            let console = ConsoleBrowser(app)
            _ = try await console.signIn(AccessWorld.emails[.ownTherapist]!)
            let base = "/console/patients/\(world.ada.id)/responses"
            #expect(try await console.get("\(base)/\(world.ada.practiceResponse)").status == .ok)
            #expect(try await console.get("\(base)/\(world.ada.practiceResponse)/fhir").status == .ok)
            #expect(try await console.get("\(base)/\(world.ada.researchResponse)").status == .notFound)
            #expect(try await console.get("\(base)/\(world.ada.researchResponse)/fhir").status == .notFound)
        }
    }

    @Test("a study's dry run tries the rule on that study's answers only")
    func dryRunOwnStudy() async throws {
        try await withTestApp { app in
            let world = try await AccessWorld.build(app)
            let research = try await world.researcher.send(
                .POST, "/studies/\(world.study)/rules/dry-run", json: ["patientId": .string(world.ada.id.uuidString), "rule": Self.phqRule])
            let practice = try await world.ownTherapist.send(
                .POST, "/studies/\(world.practice)/rules/dry-run", json: ["patientId": .string(world.ada.id.uuidString), "rule": Self.phqRule])
            // Ada answered the PHQ-9 once in each: each dry run sees one answer, its own study's.
            #expect(research.status == .ok && practice.status == .ok)
            #expect(research.body.array.count == 1)
            #expect(practice.body.array.count == 1)
            let notSharing = try await world.researcher.send(
                .POST, "/studies/\(world.study)/rules/dry-run", json: ["patientId": .string(world.ben.id.uuidString), "rule": Self.phqRule])
            #expect(notSharing.status == .unprocessableEntity)
            #expect(notSharing.body.problemFields == ["patientId"])
        }
    }

    @Test("research alerts go to the study's staff with reasons only for participants who share; practice alerts to the therapist")
    func alertsByStudy() async throws {
        try await withTestApp { app in
            let world = try await AccessWorld.build(app)
            let therapist = try await world.ownTherapist.send(.GET, "/alerts")
            let researcher = try await world.researcher.send(.GET, "/alerts")
            #expect(Set(therapist.body.array.compactMap { $0["id"].string }) == [world.ada.practiceAlert, world.ben.practiceAlert])
            #expect(Set(researcher.body.array.compactMap { $0["id"].string }) == [world.ada.researchAlert, world.ben.researchAlert])
            let reasons = Dictionary(
                uniqueKeysWithValues: researcher.body.array.compactMap { alert in alert["id"].string.map { ($0, alert["reason"].string ?? "") } })
            #expect(reasons[world.ada.researchAlert]?.contains("phq9_9 = 1") == true)
            #expect(reasons[world.ben.researchAlert]?.contains("phq9_9") == false)
            #expect(reasons[world.ben.researchAlert]?.contains("withheld") == true)
            // The researcher cannot acknowledge the practice's alert, nor the therapist the study's.
            #expect(try await world.researcher.send(.POST, "/alerts/\(world.ada.practiceAlert)/acknowledgement", json: ["note": "x"]).status == .notFound)
            #expect(try await world.ownTherapist.send(.POST, "/alerts/\(world.ada.researchAlert)/acknowledgement", json: ["note": "x"]).status == .notFound)
        }
    }

    @Test("the firing log withholds why a rule fired for a participant who does not share")
    func firingLog() async throws {
        try await withTestApp { app in
            let world = try await AccessWorld.build(app)
            let console = ConsoleBrowser(app)
            _ = try await console.signIn(AccessWorld.emails[.studyResearcher]!)
            let page = try await console.get("/console/studies/\(world.study)/rules")
            #expect(page.status == .ok)
            let withheld = app.app.interlude.localizer.text("alert.withheld", .en)
            #expect(page.html.components(separatedBy: withheld.htmlEscaped).count - 1 == 2)  // Ben: rule and built-in alert
            #expect(page.html.contains("Reply to PHQ-9: phq-9 submitted"))  // Ada's
        }
    }

    @Test("a research study's templates never appear in the practice, and cannot be sent from it")
    func templatesStayInTheirStudy() async throws {
        try await withTestApp { app in
            let world = try await AccessWorld.build(app)
            let console = ConsoleBrowser(app)
            _ = try await console.signIn(AccessWorld.emails[.ownTherapist]!)
            let page = try await console.get("/console/patients/\(world.ada.id)/intersession")
            #expect(page.html.contains("PRACTICE-TEMPLATE-MARKER"))
            #expect(!page.html.contains("RESEARCH-TEMPLATE-MARKER"))
            let sent = try await console.post(
                "/console/patients/\(world.ada.id)/interventions/template", [("templateID", world.researchTemplate)])
            #expect(sent.status == .notFound)
            let practice = try await console.post(
                "/console/patients/\(world.ada.id)/interventions/template", [("templateID", world.practiceTemplate)])
            #expect(practice.status == .seeOther)
        }
    }

    @Test("an administrator neither changes nor tries a practice's rules and plans")
    func adminAndPractices() async throws {
        try await withTestApp { app in
            let world = try await AccessWorld.build(app)
            let rules = "/studies/\(world.practice)/rules"
            #expect(try await world.admin.send(.POST, rules, json: Self.phqRule).status == .notFound)
            #expect(try await world.admin.send(.GET, rules).status == .notFound)
            #expect(
                try await world.admin.send(.POST, "\(rules)/dry-run", json: ["patientId": .string(world.ada.id.uuidString), "rule": Self.phqRule])
                    .status == .notFound)
            #expect(try await world.admin.send(.GET, "/studies/\(world.practice)/plans").status == .notFound)
            // In a research study an administrator manages rules but reads no participant's answers.
            #expect(try await world.admin.send(.POST, "/studies/\(world.study)/rules", json: Self.phqRule).status == .created)
            #expect(
                try await world.admin.send(.POST, "/studies/\(world.study)/rules/dry-run", json: ["patientId": .string(world.ada.id.uuidString), "rule": Self.phqRule])
                    .status == .forbidden)
        }
    }
}
