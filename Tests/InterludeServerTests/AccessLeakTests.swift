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
            // setup
            let world = try await AccessWorld.build(app)

            // act
            let practice = try await world.ownTherapist.send(.GET, "/responses/\(world.ada.practiceResponse)\(format)")
            let research = try await world.ownTherapist.send(.GET, "/responses/\(world.ada.researchResponse)\(format)")
            let own = try await world.ada.client.send(.GET, "/responses/\(world.ada.researchResponse)\(format)")

            // verify
            #expect(practice.status == .ok)
            #expect(research.status == .notFound)
            #expect(own.status == .ok)
        }
    }

    @Test(
        "the console's direct response addresses show a practice answer to the therapist, never a research answer",
        arguments: [("", true), ("/fhir", true), ("", false), ("/fhir", false)])
    func consoleResponse(_ suffix: String, practice: Bool) async throws {
        try await withTestApp { app in
            // setup
            let world = try await AccessWorld.build(app)
            let console = ConsoleBrowser(app)
            _ = try await console.signIn(AccessWorld.emails[.ownTherapist]!)
            let response = practice ? world.ada.practiceResponse : world.ada.researchResponse

            // act
            let page = try await console.get("/console/patients/\(world.ada.id)/responses/\(response)\(suffix)")

            // verify
            #expect(page.status == (practice ? .ok : .notFound))
        }
    }

    func dryRun(_ client: APIClient, in studyID: UUID, of patientID: UUID) async throws -> APIClient.Reply {
        try await client.send(
            .POST, "/studies/\(studyID)/rules/dry-run",
            json: ["patientId": .string(patientID.uuidString), "rule": Self.phqRule])
    }

    @Test("a study's dry run tries the rule on that study's answers only")
    func dryRunOwnStudy() async throws {
        try await withTestApp { app in
            // setup: Ada answered the PHQ-9 once in the practice and once in the study
            let world = try await AccessWorld.build(app)

            // act
            let research = try await dryRun(world.researcher, in: world.study, of: world.ada.id)
            let practice = try await dryRun(world.ownTherapist, in: world.practice, of: world.ada.id)

            // verify: each sees one answer, its own study's
            #expect(try research.decoded([Components.Schemas.RuleDryRunLine].self).count == 1)
            #expect(try practice.decoded([Components.Schemas.RuleDryRunLine].self).count == 1)
        }
    }

    @Test("a study's dry run is refused for a participant who does not share with research")
    func dryRunNotSharing() async throws {
        try await withTestApp { app in
            // setup
            let world = try await AccessWorld.build(app)

            // act
            let reply = try await dryRun(world.researcher, in: world.study, of: world.ben.id)

            // verify
            #expect(reply.status == .unprocessableEntity)
            #expect(reply.body.problemFields == ["patientId"])
        }
    }

    @Test(
        "research alerts go to the study's staff with reasons only for participants who share; practice alerts to the therapist"
    )
    func alertsByStudy() async throws {
        try await withTestApp { app in
            // setup
            let world = try await AccessWorld.build(app)

            // act
            let therapist = try await world.ownTherapist.send(.GET, "/alerts").decoded([Components.Schemas.Alert].self)
            let researcher = try await world.researcher.send(.GET, "/alerts").decoded([Components.Schemas.Alert].self)

            // verify
            #expect(Set(therapist.map(\.id)) == [world.ada.practiceAlert, world.ben.practiceAlert])
            #expect(Set(researcher.map(\.id)) == [world.ada.researchAlert, world.ben.researchAlert])
            let reasons = Dictionary(uniqueKeysWithValues: researcher.map { ($0.id, $0.reason) })
            #expect(reasons[world.ada.researchAlert]?.contains("phq9_9 = 1") == true)
            #expect(reasons[world.ben.researchAlert]?.contains("phq9_9") == false)
            #expect(reasons[world.ben.researchAlert]?.contains("withheld") == true)
        }
    }

    @Test(
        "the researcher cannot acknowledge the practice's alert, nor the therapist the study's",
        arguments: [("the researcher", true), ("the therapist", false)])
    func acknowledgeOtherStudy(_ label: String, researcher: Bool) async throws {
        try await withTestApp { app in
            // setup
            let world = try await AccessWorld.build(app)
            let (caller, alert) =
                researcher ? (world.researcher, world.ada.practiceAlert) : (world.ownTherapist, world.ada.researchAlert)

            // act
            let reply = try await caller.send(.POST, "/alerts/\(alert)/acknowledgement", json: ["note": "x"])

            // verify
            #expect(reply.status == .notFound, "\(label)")
            #expect(try await AlertRecord.find(UUID(uuidString: alert), on: app.database)?.acknowledgedAt == nil)
        }
    }

    @Test("the firing log withholds why a rule fired for a participant who does not share")
    func firingLog() async throws {
        try await withTestApp { app in
            // setup
            let world = try await AccessWorld.build(app)
            let console = ConsoleBrowser(app)
            _ = try await console.signIn(AccessWorld.emails[.studyResearcher]!)

            // act
            let page = try await console.get("/console/studies/\(world.study)/rules")

            // verify
            #expect(page.status == .ok)
            let withheld = app.app.interlude.localizer.text("alert.withheld", .en)
            // Ben: the rule's alert and the built-in one.
            #expect(page.html.components(separatedBy: withheld.htmlEscaped).count - 1 == 2)
            #expect(page.html.contains("Reply to PHQ-9: phq-9 submitted"))  // Ada's
        }
    }

    @Test("a research study's templates never appear in the practice's send form")
    func templatesStayInTheirStudy() async throws {
        try await withTestApp { app in
            // setup
            let world = try await AccessWorld.build(app)
            let console = ConsoleBrowser(app)
            _ = try await console.signIn(AccessWorld.emails[.ownTherapist]!)

            // act
            let page = try await console.get("/console/patients/\(world.ada.id)/intersession")

            // verify
            #expect(page.html.contains("PRACTICE-TEMPLATE-MARKER"))
            #expect(!page.html.contains("RESEARCH-TEMPLATE-MARKER"))
        }
    }

    @Test(
        "from the practice a therapist sends the practice's templates, never a research study's",
        arguments: [("the practice's", true), ("a research study's", false)])
    func sendTemplate(_ label: String, practice: Bool) async throws {
        try await withTestApp { app in
            // setup
            let world = try await AccessWorld.build(app)
            let console = ConsoleBrowser(app)
            _ = try await console.signIn(AccessWorld.emails[.ownTherapist]!)
            _ = try await console.get("/console/patients/\(world.ada.id)/intersession")
            let before = try await app.count("interventions")

            // act
            let sent = try await console.post(
                "/console/patients/\(world.ada.id)/interventions/template",
                [("templateID", practice ? world.practiceTemplate : world.researchTemplate)])

            // verify
            #expect(sent.status == (practice ? .seeOther : .notFound), "\(label)")
            #expect(try await app.count("interventions") == before + (practice ? 1 : 0))
        }
    }

    enum AdminAttempt: String, CaseIterable, Sendable {
        case addsPracticeRule, readsPracticeRules, dryRunsInPractice, readsPracticePlans, addsStudyRule, dryRunsInStudy

        var status: HTTPStatus {
            switch self {
            case .addsStudyRule: .created
            case .dryRunsInStudy: .forbidden
            default: .notFound
            }
        }
    }

    @Test(
        "an administrator neither changes nor tries a practice's rules and plans; in a research study manages rules but reads no answers",
        arguments: AdminAttempt.allCases)
    func adminAndPractices(_ attempt: AdminAttempt) async throws {
        try await withTestApp { app in
            // setup
            let world = try await AccessWorld.build(app)
            let practiceRules = "/studies/\(world.practice)/rules"

            // act
            let reply: APIClient.Reply
            switch attempt {
            case .addsPracticeRule: reply = try await world.admin.send(.POST, practiceRules, json: Self.phqRule)
            case .readsPracticeRules: reply = try await world.admin.send(.GET, practiceRules)
            case .dryRunsInPractice: reply = try await dryRun(world.admin, in: world.practice, of: world.ada.id)
            case .readsPracticePlans: reply = try await world.admin.send(.GET, "/studies/\(world.practice)/plans")
            case .addsStudyRule:
                reply = try await world.admin.send(.POST, "/studies/\(world.study)/rules", json: Self.phqRule)
            case .dryRunsInStudy: reply = try await dryRun(world.admin, in: world.study, of: world.ada.id)
            }

            // verify
            #expect(reply.status == attempt.status, "\(reply.text)")
            #expect(!reply.text.contains("phq9"))
        }
    }
}
