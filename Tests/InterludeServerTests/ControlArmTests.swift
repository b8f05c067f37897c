import Fluent
import Foundation
import InterludeCore
import Testing
import VaporTesting

@testable import InterludeServer

/// What an arm decides: a therapist on a research study's team sends their own patients interventions there, and a
/// control arm's participants answer their questionnaires and receive nothing else.
@Suite("Control arms and interventions in a research study")
struct ControlArmTests {
    struct World {
        let researcher: APIClient
        let therapist: APIClient
        let study: String
        /// Allocated to the arm `app` (in turn: the first to join).
        let ada: UUID
        /// Allocated to the control arm.
        let ben: UUID
    }

    /// An open study with the arms `app` and `control` (a control arm), allocated in turn.
    static let design = StudyAPITests.study("open").merging([
        "arms": ["app", "control"], "allocation": "alternating", "allocationSettings": ["control": [false, true]],
    ])

    /// A running study with the arms `app` and `control` (a control arm), a therapist on its team, and two of the
    /// therapist's patients who joined it in turn.
    func world(_ app: TestContext) async throws -> World {
        let (researcher, _) = try await app.staff("researcher", "lab@uni.example")
        let study = try await StudyAPITests().createStudy(
            researcher,
            Self.design)
        let (therapist, _) = try await app.staff("therapist", "berger@praxis.example")
        let added = try await researcher.send(
            .POST, "/studies/\(study)/staff", json: ["email": "berger@praxis.example", "role": "therapist"])
        try #require(added.status == .created, "\(added.text)")
        var ids: [UUID] = []
        for address in ["ada@example.org", "ben@example.org"] {
            let (patient, id) = try await app.patient(address)
            try await app.pair(patient, with: therapist)
            try #require(try await StudyAPITests.join(patient, study).status == .created)
            ids.append(id)
        }
        return World(researcher: researcher, therapist: therapist, study: study, ada: ids[0], ben: ids[1])
    }

    func interventions(of patient: UUID, _ app: TestContext) async throws -> [InterventionRecord] {
        try await InterventionRecord.query(on: app.database).filter(\.$patient.$id == patient).all()
    }

    func send(_ client: APIClient, to patient: UUID, in study: String?) async throws -> APIClient.Reply {
        var body: JSONValue = ["kind": "commendation", "text": "Well done this week."]
        if let study { body = body.merging(["studyId": .string(study)]) }
        return try await client.send(.POST, "/patients/\(patient)/interventions", json: body)
    }

    @Test("the study keeps which arm is a control arm; a list of the wrong length is refused by name")
    func settings() async throws {
        try await withTestApp { app in
            // setup
            let world = try await world(app)
            // act
            let read = try await world.researcher.send(.GET, "/studies/\(world.study)")
            let refused = try await world.researcher.send(
                .POST, "/studies",
                json: StudyAPITests.study("open").merging([
                    "arms": ["app", "control"], "allocationSettings": ["control": [true]],
                ]))
            // verify
            #expect(read.status == .ok)
            #expect(read.body["allocationSettings"]["control"].array.map(\.bool) == [false, true])
            #expect(refused.status == .unprocessableEntity || refused.status == .badRequest, "\(refused.text)")
            #expect(try StudyAPITests.fields(refused) == ["allocationSettings.control"])
        }
    }

    @Test(
        "a therapist on the team sends their patient an intervention in the study, audited; a control arm's is refused")
    func therapistSends() async throws {
        try await withTestApp { app in
            // setup
            let world = try await world(app)
            // act
            let sent = try await send(world.therapist, to: world.ada, in: world.study)
            let control = try await send(world.therapist, to: world.ben, in: world.study)
            // verify
            #expect(sent.status == .created, "\(sent.text)")
            let stored = try await interventions(of: world.ada, app)
            #expect(stored.map { $0.$study.id } == [UUID(uuidString: world.study)])
            let audited = try await AuditEventRecord.query(on: app.database)
                .filter(\.$action == AuditAction.interventionSent.rawValue).all()
            #expect(audited.count == 1)
            #expect(control.status == .conflict)
            #expect(try control.decoded(Components.Schemas.Problem.self)._type == "/problems/control-arm")
            #expect(try await interventions(of: world.ben, app).isEmpty)
        }
    }

    @Test("in the practice nothing changes, a researcher may not send, and a study id that is no id is named")
    func refusals() async throws {
        try await withTestApp { app in
            // setup
            let world = try await world(app)
            // act
            let practice = try await send(world.therapist, to: world.ben, in: nil)
            let researcher = try await send(world.researcher, to: world.ada, in: world.study)
            let malformed = try await world.therapist.send(
                .POST, "/patients/\(world.ada)/interventions",
                json: ["kind": "commendation", "text": "Well done.", "studyId": "not-an-id"])
            // verify
            #expect(practice.status == .created, "the control arm decides in its study only: \(practice.text)")
            #expect(researcher.status == .forbidden, "\(researcher.text)")
            #expect(malformed.status == .badRequest || malformed.status == .unprocessableEntity)
            #expect(try StudyAPITests.fields(malformed) == ["studyId"])
            #expect(try await interventions(of: world.ada, app).isEmpty)
        }
    }

    @Test("the study's rules and messages act for the arm that receives them, not for the control arm")
    func rulesAndMessages() async throws {
        try await withTestApp { app in
            // setup
            let world = try await world(app)
            let rule = try await world.researcher.send(
                .POST, "/studies/\(world.study)/rules", json: AccessLeakTests.phqRule)
            try #require(rule.status == .created, "\(rule.text)")
            let owner = try #require(
                try await UserRecord.query(on: app.database).filter(\.$email == "lab@uni.example").first())
            let grant = try await StudyAccess(database: app.database, services: app.app.interlude)
                .require(.editLibrary, in: try #require(UUID(uuidString: world.study)), by: owner)
            let library = InterventionLibrary(database: app.database, services: app.app.interlude)
            try await library.addMessage(
                [.en: "Notice one thing you value today.", .de: "Bemerken Sie etwas."], in: grant)
            try await library.setPlan(
                MessagePlan(perDay: 4, windowStart: LocalTime("00:00")!, windowEnd: LocalTime("23:59")!), in: grant)
            let rules = RuleService(database: app.database, services: app.app.interlude)
            // act
            let forAda = try await rules.applicable(to: world.ada, context: UUID(uuidString: world.study))
            let forBen = try await rules.applicable(to: world.ben, context: UUID(uuidString: world.study))
            _ = try await MessagePlanner(database: app.database, services: app.app.interlude).run(now: app.clock.now)
            // verify
            #expect(forAda.map(\.rule.name) == [StudyRule.phq9Item9.name, "Any PHQ-9"])
            #expect(forBen.map(\.rule.name) == [StudyRule.phq9Item9.name], "the safety alert stays")
            #expect(try await interventions(of: world.ada, app).contains { $0.kind == .message })
            #expect(try await interventions(of: world.ben, app).isEmpty)
        }
    }

    @Test(
        "the study form takes the arms as rows with shares, targets and a control arm; a share that is no number is named"
    )
    func consoleForm() async throws {
        try await withTestApp { app in
            // setup
            let browser = try await ConsoleTests().researcherAtNewStudy(app)
            func arms(share: String) -> [(String, String)] {
                [
                    ("armName[]", "app"), ("armShare[]", share), ("armTarget[]", "20"), ("armReceives[]", "all"),
                    ("armName[]", "control"), ("armShare[]", "1"), ("armTarget[]", ""),
                    ("armReceives[]", "control"), ("armName[]", ""), ("armShare[]", "1"), ("armTarget[]", ""),
                    ("armReceives[]", "all"), ("allocation", "permutedBlocks"),
                ]
            }
            // act
            let refused = try await browser.post("/console/studies/new", ConsoleTests.studyForm + arms(share: "two"))
            let stored = try await app.count("studies")
            let created = try await browser.post("/console/studies/new", ConsoleTests.studyForm + arms(share: "2"))
            let edit = try await browser.get("\(try #require(created.location))/edit")
            // verify
            #expect(refused.status == .unprocessableEntity)
            #expect(refused.html.contains("id=\"arms-error\""))
            #expect(stored == 0)
            #expect(created.status == .seeOther)
            let study = try #require(try await StudyRecord.query(on: app.database).first())
            let design = try #require(StudyArms.design(of: study))
            #expect(
                design.arms == [AllocationArm("app", ratio: 2, target: 20), AllocationArm("control", control: true)])
            #expect(
                edit.html.contains(
                    "id=\"armName-1\" name=\"armName[]\" type=\"text\" maxlength=\"60\" value=\"control\""))
            #expect(edit.html.contains("<option value=\"control\" selected>"))
            #expect(edit.html.contains("id=\"armName-3\""), "two empty rows for more arms")
        }
    }
}
