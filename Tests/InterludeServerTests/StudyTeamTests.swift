import Fluent
import Foundation
import InterludeCore
import Testing
import VaporTesting

@testable import InterludeServer

@Suite("Study teams")
struct StudyTeamTests {
    typealias Member = Components.Schemas.StudyStaffMember

    /// A research study of lab@uni.example, with another researcher, a therapist and an admin who are not on it.
    func study(_ app: TestContext) async throws -> (owner: APIClient, studyID: String) {
        let (owner, _) = try await app.staff("researcher", "lab@uni.example")
        _ = try await app.staff("researcher", "kim@uni.example")
        _ = try await app.staff("therapist", "berger@praxis.example")
        _ = try await app.staff("admin", "admin@clinic.example")
        return (owner, try await StudyAPITests().createStudy(owner, StudyAPITests.study("open")))
    }

    func add(_ email: String, as role: String, by client: APIClient, to studyID: String) async throws -> APIClient.Reply
    {
        try await client.send(
            .POST, "/studies/\(studyID)/staff", json: ["email": .string(email), "role": .string(role)])
    }

    func team(_ client: APIClient, _ studyID: String) async throws -> [Member] {
        try await client.send(.GET, "/studies/\(studyID)/staff").decoded([Member].self)
    }

    func userID(_ app: TestContext, _ email: String) async throws -> UUID {
        try #require(try await UserRecord.query(on: app.database).filter(\.$email == email).first()?.id)
    }

    // MARK: Adding

    @Test("a new study's team is its creator, as owner")
    func creatorOwns() async throws {
        try await withTestApp { app in
            // setup / act
            let (owner, studyID) = try await study(app)

            // verify
            let members = try await team(owner, studyID)
            #expect(members.map(\.email) == ["lab@uni.example"])
            #expect(members.map(\.role) == [.owner])
        }
    }

    @Test("the owner adds a researcher by address, in any spelling; the change is audited")
    func addResearcher() async throws {
        try await withTestApp { app in
            // setup
            let (owner, studyID) = try await study(app)

            // act
            let added = try await add(" Kim@Uni.example ", as: "researcher", by: owner, to: studyID)

            // verify
            #expect(added.status == .created, "\(added.text)")
            #expect(try added.decoded(Member.self).email == "kim@uni.example")
            #expect(Set(try await team(owner, studyID).map(\.email)) == ["lab@uni.example", "kim@uni.example"])
            #expect(try await app.count("audit_events WHERE action = 'study.team.changed'") == 1)
        }
    }

    @Test(
        "who may take which role: a therapist as the study's therapist, a researcher as owner, researcher or data manager",
        arguments: [
            ("berger@praxis.example", "therapist", true), ("kim@uni.example", "owner", true),
            ("kim@uni.example", "dataManager", true),
            ("berger@praxis.example", "researcher", false), ("kim@uni.example", "therapist", false),
            ("admin@clinic.example", "researcher", false),
        ])
    func rolesByAccount(_ email: String, role: String, allowed: Bool) async throws {
        try await withTestApp { app in
            // setup
            let (owner, studyID) = try await study(app)

            // act
            let reply = try await add(email, as: role, by: owner, to: studyID)

            // verify
            #expect(reply.status == (allowed ? .created : .unprocessableEntity), "\(email) as \(role): \(reply.text)")
            if !allowed { #expect(reply.body.problemFields == ["role"]) }
            #expect(try await team(owner, studyID).count == (allowed ? 2 : 1))
        }
    }

    @Test(
        "an address that is no staff account, or no address, is refused naming the field",
        arguments: [
            ("nobody@uni.example", "unknown"), ("patient@example.org", "unknown"), ("not an address", "invalidFormat"),
        ])
    func unknownAddress(_ email: String, code: String) async throws {
        try await withTestApp { app in
            // setup
            let (owner, studyID) = try await study(app)
            _ = try await app.patient()

            // act
            let reply = try await add(email, as: "researcher", by: owner, to: studyID)

            // verify
            #expect(reply.status == .unprocessableEntity)
            #expect(
                reply.body["errors"][0]["field"].string == "email" && reply.body["errors"][0]["code"].string == code,
                "\(reply.text)")
            #expect(try await team(owner, studyID).count == 1)
        }
    }

    @Test("someone already on the team is not added twice")
    func addedTwice() async throws {
        try await withTestApp { app in
            // setup
            let (owner, studyID) = try await study(app)
            _ = try await add("kim@uni.example", as: "researcher", by: owner, to: studyID)

            // act
            let again = try await add("kim@uni.example", as: "dataManager", by: owner, to: studyID)

            // verify
            #expect(again.status == .conflict)
            #expect(again.body["type"].string == "/problems/already-on-team")
            #expect(try await team(owner, studyID).first { $0.email == "kim@uni.example" }?.role == .researcher)
        }
    }

    enum Caller: String, CaseIterable, Sendable {
        case researcherOnTeam, researcherElsewhere, therapistOnTeam, patient, admin

        var status: HTTPStatus {
            switch self {
            case .researcherOnTeam, .therapistOnTeam, .patient: .forbidden
            case .researcherElsewhere: .notFound
            case .admin: .created
            }
        }
    }

    @Test(
        "only the owner and administrators choose the team; other members see it, outsiders learn nothing",
        arguments: Caller.allCases)
    func whoChoosesTheTeam(_ caller: Caller) async throws {
        try await withTestApp { app in
            // setup: Kim and Berger on the team; Rita researches elsewhere
            let (owner, studyID) = try await study(app)
            _ = try await add("kim@uni.example", as: "researcher", by: owner, to: studyID)
            _ = try await add("berger@praxis.example", as: "therapist", by: owner, to: studyID)
            _ = try await app.staff("researcher", "rita@uni.example")
            _ = try await app.staff("researcher", "new@uni.example")
            let client: APIClient =
                switch caller {
                case .researcherOnTeam: try await app.signIn("kim@uni.example")
                case .researcherElsewhere: try await app.signIn("rita@uni.example")
                case .therapistOnTeam: try await app.signIn("berger@praxis.example")
                case .patient: try await app.patient().client
                case .admin: try await app.signIn("admin@clinic.example")
                }

            // act
            let listed = try await client.send(.GET, "/studies/\(studyID)/staff")
            let added = try await add("new@uni.example", as: "researcher", by: client, to: studyID)

            // verify
            #expect(added.status == caller.status, "\(added.text)")
            switch caller {
            case .researcherOnTeam, .therapistOnTeam, .admin: #expect(listed.status == .ok)
            case .researcherElsewhere: #expect(listed.status == .notFound && !listed.text.contains("lab@uni.example"))
            case .patient: #expect(listed.status == .forbidden)
            }
            #expect(try await team(owner, studyID).count == (caller == .admin ? 4 : 3))
        }
    }

    @Test("a practice has no team to list or change")
    func practiceHasNoTeam() async throws {
        try await withTestApp { app in
            // setup
            let (therapist, therapistID) = try await app.staff("therapist", "berger@praxis.example")
            let practice = try #require(
                try await StudyRecord.query(on: app.database).filter(\.$owner.$id == therapistID).first()?.id)

            // act
            let listed = try await therapist.send(.GET, "/studies/\(practice)/staff")
            let added = try await add("berger@praxis.example", as: "therapist", by: therapist, to: practice.uuidString)

            // verify
            #expect(listed.status == .forbidden)
            #expect(added.status == .forbidden)
        }
    }

    // MARK: Changing and removing

    @Test("the owner makes a researcher a data manager, who then exports but no longer reads participants")
    func becomeDataManager() async throws {
        try await withTestApp { app in
            // setup
            let (owner, studyID) = try await study(app)
            _ = try await add("kim@uni.example", as: "researcher", by: owner, to: studyID)
            let kim = try await app.signIn("kim@uni.example")
            let before = try await kim.send(.GET, "/studies/\(studyID)/enrollments")

            // act
            let changed = try await owner.send(
                .PATCH, "/studies/\(studyID)/staff/\(try await userID(app, "kim@uni.example"))",
                json: ["role": "dataManager"])

            // verify
            #expect(try changed.decoded(Member.self).role == .dataManager)
            #expect(before.status == .ok)
            #expect(try await kim.send(.GET, "/studies/\(studyID)/enrollments").status == .forbidden)
            #expect(try await kim.send(.GET, "/studies/\(studyID)").status == .ok)
        }
    }

    @Test(
        "the last owner can neither step down nor leave",
        arguments: [("steps down", true), ("leaves", false)])
    func lastOwnerStays(_ label: String, demote: Bool) async throws {
        try await withTestApp { app in
            // setup
            let (owner, studyID) = try await study(app)
            let path = "/studies/\(studyID)/staff/\(try await userID(app, "lab@uni.example"))"

            // act
            let reply =
                demote
                ? try await owner.send(.PATCH, path, json: ["role": "researcher"]) : try await owner.send(.DELETE, path)

            // verify
            #expect(reply.status == .conflict, "\(label)")
            #expect(reply.body["type"].string == "/problems/last-owner")
            #expect(try await team(owner, studyID).map(\.role) == [.owner])
        }
    }

    @Test("with a second owner, the first may leave, and then has no standing in the study")
    func ownerLeaves() async throws {
        try await withTestApp { app in
            // setup
            let (owner, studyID) = try await study(app)
            _ = try await add("kim@uni.example", as: "owner", by: owner, to: studyID)

            // act
            let left = try await owner.send(
                .DELETE, "/studies/\(studyID)/staff/\(try await userID(app, "lab@uni.example"))")

            // verify
            #expect(left.status == .noContent)
            #expect(try await owner.send(.GET, "/studies/\(studyID)").status == .notFound)
            let kim = try await app.signIn("kim@uni.example")
            #expect(try await team(kim, studyID).map(\.email) == ["kim@uni.example"])
        }
    }

    @Test("changing or removing someone not on the team is not found")
    func notOnTeam() async throws {
        try await withTestApp { app in
            // setup
            let (owner, studyID) = try await study(app)
            let rita = try await userID(app, "kim@uni.example")

            // act
            let changed = try await owner.send(
                .PATCH, "/studies/\(studyID)/staff/\(rita)", json: ["role": "researcher"])
            let removed = try await owner.send(.DELETE, "/studies/\(studyID)/staff/\(rita)")

            // verify
            #expect(changed.status == .notFound)
            #expect(removed.status == .notFound)
        }
    }

    // MARK: A therapist on a research team

    @Test("a therapist on a research study's team sees their own paired patients among its participants, nobody else")
    func therapistSeesOwnPatients() async throws {
        try await withTestApp { app in
            // setup: Ada is Berger's patient, Bob is not; both join the study
            let (owner, studyID) = try await study(app)
            _ = try await add("berger@praxis.example", as: "therapist", by: owner, to: studyID)
            let berger = try await app.signIn("berger@praxis.example")
            let (ada, _) = try await app.patient("ada@example.org")
            let (bob, _) = try await app.patient("bob@example.org")
            try await app.pair(ada, with: berger)
            for patient in [ada, bob] {
                _ = try await patient.send(.POST, "/studies/\(studyID)/enrollment", json: ["consentVersion": "2026-1"])
            }
            let adaPseudonym = try #require(
                try await ada.send(.GET, "/me").decoded(Components.Schemas.User.self).patient?.pseudonym)

            // act
            let seen = try await berger.send(.GET, "/studies/\(studyID)/enrollments").decoded(
                [Components.Schemas.Participant].self)
            let all = try await owner.send(.GET, "/studies/\(studyID)/enrollments").decoded(
                [Components.Schemas.Participant].self)

            // verify
            #expect(seen.map(\.pseudonym) == [adaPseudonym])
            #expect(all.count == 2)
        }
    }

    // MARK: The console

    /// The owner's console, signed in at the team page.
    func ownerConsole(_ app: TestContext, _ studyID: String) async throws -> (ConsoleBrowser, ConsoleBrowser.Page) {
        let browser = ConsoleBrowser(app)
        _ = try await browser.signIn("lab@uni.example")
        return (browser, try await browser.get("/console/studies/\(studyID)/team"))
    }

    @Test("the owner's team page lists the members with their roles, and the forms to change the team")
    func consoleTeamPage() async throws {
        try await withTestApp { app in
            // setup
            let (owner, studyID) = try await study(app)
            _ = try await add("kim@uni.example", as: "dataManager", by: owner, to: studyID)

            // act
            let (_, page) = try await ownerConsole(app, studyID)

            // verify
            #expect(page.status == .ok)
            #expect(
                page.html.contains("kim@uni.example")
                    && page.html.contains("<option value=\"dataManager\" selected>Data manager</option>"))
            #expect(page.html.lowercased().contains("action=\"/console/studies/\(studyID)/team\""))
        }
    }

    @Test("a member who does not choose the team sees it without the forms")
    func consoleTeamReadOnly() async throws {
        try await withTestApp { app in
            // setup
            let (owner, studyID) = try await study(app)
            _ = try await add("kim@uni.example", as: "researcher", by: owner, to: studyID)
            let browser = ConsoleBrowser(app)
            _ = try await browser.signIn("kim@uni.example")

            // act
            let page = try await browser.get("/console/studies/\(studyID)/team")

            // verify
            #expect(page.status == .ok)
            #expect(page.html.contains("lab@uni.example"))
            #expect(!page.html.lowercased().contains("<form method=\"post\" action=\"/console/studies/\(studyID)/team"))
        }
    }

    @Test("the owner adds a data manager in the console")
    func consoleAdd() async throws {
        try await withTestApp { app in
            // setup
            let (owner, studyID) = try await study(app)
            let (browser, _) = try await ownerConsole(app, studyID)

            // act
            let added = try await browser.post(
                "/console/studies/\(studyID)/team", [("email", "kim@uni.example"), ("role", "dataManager")])

            // verify
            #expect(added.status == .seeOther)
            #expect(try await team(owner, studyID).first { $0.email == "kim@uni.example" }?.role == .dataManager)
        }
    }

    @Test("an address that is no staff account comes back beside the field in the console, and nothing changes")
    func consoleAddRefused() async throws {
        try await withTestApp { app in
            // setup
            let (owner, studyID) = try await study(app)
            let (browser, _) = try await ownerConsole(app, studyID)

            // act
            let refused = try await browser.post(
                "/console/studies/\(studyID)/team", [("email", "nobody@uni.example"), ("role", "researcher")])

            // verify
            #expect(refused.status == .unprocessableEntity)
            #expect(
                refused.html.contains("id=\"email-error\"")
                    && refused.html.contains("No staff account has this address."))
            #expect(refused.html.contains("value=\"nobody@uni.example\""))
            #expect(try await team(owner, studyID).count == 1)
        }
    }

    @Test("the last owner's removal in the console says why it cannot be")
    func consoleLastOwner() async throws {
        try await withTestApp { app in
            // setup
            let (owner, studyID) = try await study(app)
            let (browser, _) = try await ownerConsole(app, studyID)

            // act
            let refused = try await browser.post(
                "/console/studies/\(studyID)/team/\(try await userID(app, "lab@uni.example"))/delete", [])

            // verify
            #expect(refused.status == .conflict)
            #expect(refused.html.contains("The study needs an owner"))
            #expect(try await team(owner, studyID).map(\.role) == [.owner])
        }
    }

    @Test("a data manager's study page shows the study but none of its participants")
    func dataManagerStudyPage() async throws {
        try await withTestApp { app in
            // setup: a participant has joined
            let (owner, studyID) = try await study(app)
            _ = try await add("kim@uni.example", as: "dataManager", by: owner, to: studyID)
            let (patient, _) = try await app.patient()
            _ = try await patient.send(.POST, "/studies/\(studyID)/enrollment", json: ["consentVersion": "2026-1"])
            let pseudonym = try #require(
                try await patient.send(.GET, "/me").decoded(Components.Schemas.User.self).patient?.pseudonym)
            let browser = ConsoleBrowser(app)
            _ = try await browser.signIn("kim@uni.example")

            // act
            let page = try await browser.get("/console/studies/\(studyID)")

            // verify
            #expect(page.status == .ok)
            #expect(!page.html.contains(pseudonym))
            #expect(page.html.lowercased().contains("/console/studies/\(studyID)/team"))
        }
    }

    // MARK: Races

    @Test("two owners removing each other at once leave the study with one owner")
    func ownersRemoveEachOther() async throws {
        try await withTestApp { app in
            // setup
            let (owner, studyID) = try await study(app)
            _ = try await add("kim@uni.example", as: "owner", by: owner, to: studyID)
            let kim = try await app.signIn("kim@uni.example")
            let labID = try await userID(app, "lab@uni.example")
            let kimID = try await userID(app, "kim@uni.example")

            // act
            let replies = try await RunningServer.parallel(app, 2) { server, index in
                index == 0
                    ? try await server.send(owner, .DELETE, "/studies/\(studyID)/staff/\(kimID)")
                    : try await server.send(kim, .DELETE, "/studies/\(studyID)/staff/\(labID)")
            }

            // verify
            // The other is refused as the last owner, or, when the first removal took away their own standing, finds
            // the study gone for them.
            let codes = replies.map(\.status.code).sorted()
            #expect(codes == [204, 409] || codes == [204, 404], "\(codes)")
            let left = try await StudyStaffRecord.query(on: app.database).filter(
                \.$study.$id == UUID(uuidString: studyID)!
            ).all()
            #expect(left.filter { $0.role == .owner }.count == 1)
        }
    }
}
