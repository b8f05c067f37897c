import Fluent
import Foundation
import InterludeCore
import Testing
import VaporTesting

@testable import InterludeServer

/// A therapist's comparison in their own practice: arms set on the practice, patients allocated as they pair, a
/// control arm receiving no interventions.
@Suite("Arms in a practice")
struct PracticeArmsTests {
    static let arms: JSONValue = [
        "arms": ["app", "control"], "allocation": "alternating", "allocationSettings": ["control": [false, true]],
    ]

    func practice(of therapist: UUID, _ app: TestContext) async throws -> UUID {
        try await PairingService(database: app.database, services: app.app.interlude).practice(of: therapist)
            .requireID()
    }

    func log(_ app: TestContext, _ study: UUID) async throws -> [AllocationRecord] {
        try await AllocationRecord.query(on: app.database).filter(\.$study.$id == study).sort(\.$sequence).all()
    }

    @Test("the therapist divides their practice into arms; a broken division is refused by name, and only they may")
    func setsArms() async throws {
        try await withTestApp { app in
            // setup
            let (therapist, therapistID) = try await app.staff("therapist", "berger@praxis.example")
            let (other, _) = try await app.staff("therapist", "huber@praxis.example")
            let (researcher, _) = try await app.staff("researcher", "lab@uni.example")
            let (patient, _) = try await app.patient()
            let practice = try await practice(of: therapistID, app)
            // act
            let set = try await therapist.send(.PUT, "/studies/\(practice)/arms", json: Self.arms)
            let single = try await therapist.send(.PUT, "/studies/\(practice)/arms", json: ["arms": ["app"]])
            let byOther = try await other.send(.PUT, "/studies/\(practice)/arms", json: Self.arms)
            let byResearcher = try await researcher.send(.PUT, "/studies/\(practice)/arms", json: Self.arms)
            let byPatient = try await patient.send(.PUT, "/studies/\(practice)/arms", json: Self.arms)
            // verify
            #expect(set.status == .ok, "\(set.text)")
            #expect(set.body["arms"].array.map(\.string) == ["app", "control"])
            #expect(set.body["allocationSettings"]["control"].array.map(\.bool) == [false, true])
            #expect(single.status == .unprocessableEntity)
            #expect(try StudyAPITests.fields(single) == ["arms"])
            #expect(byOther.status == .notFound && byResearcher.status == .notFound)
            #expect(byPatient.status == .forbidden)
            let study = try #require(try await StudyRecord.find(practice, on: app.database))
            #expect(StudyArms.names(of: study) == ["app", "control"])
            let audited = try await AuditEventRecord.query(on: app.database).filter(\.$action == "study.changed").all()
            #expect(audited.count == 1)
        }
    }

    @Test(
        "patients are allocated in turn as they pair; the control arm's patient gets no intervention, the other does; a full comparison pairs without an arm"
    )
    func allocatesAtPairing() async throws {
        try await withTestApp { app in
            // setup
            let (therapist, therapistID) = try await app.staff("therapist", "berger@praxis.example")
            let practice = try await practice(of: therapistID, app)
            let full = Self.arms.merging([
                "allocationSettings": ["control": [false, true], "targets": [1, 1]]
            ])
            try #require(try await therapist.send(.PUT, "/studies/\(practice)/arms", json: full).status == .ok)
            var ids: [UUID] = []
            // act
            for address in ["ada@example.org", "ben@example.org", "cleo@example.org"] {
                let (patient, id) = try await app.patient(address)
                try await app.pair(patient, with: therapist)
                ids.append(id)
            }
            let toAda = try await therapist.send(
                .POST, "/patients/\(ids[0])/interventions", json: ["kind": "commendation", "text": "Well done."])
            let toBen = try await therapist.send(
                .POST, "/patients/\(ids[1])/interventions", json: ["kind": "commendation", "text": "Well done."])
            // verify
            let enrollments = try await EnrollmentRecord.query(on: app.database).filter(\.$study.$id == practice)
                .all()
            let arms = Dictionary(uniqueKeysWithValues: enrollments.map { ($0.$patient.id, $0.arm) })
            #expect(arms[ids[0]] == "app" && arms[ids[1]] == "control")
            #expect(arms[ids[2]] == .some(nil))
            let entries = try await log(app, practice)
            #expect(entries.map(\.participantID) == [ids[0], ids[1]])
            #expect(entries.allSatisfy { $0.site == practice.lowercasedText })
            #expect(toAda.status == .created, "\(toAda.text)")
            #expect(toBen.status == .conflict)
        }
    }

    @Test(
        "the console's page between sessions says a control-arm patient receives no interventions and offers none; the other arm's patient is sent one"
    )
    func consoleControlArm() async throws {
        try await withTestApp { app in
            // setup: Ada pairs first (app), Ben second (control)
            let (therapist, therapistID) = try await app.staff("therapist", "berger@praxis.example")
            let practice = try await practice(of: therapistID, app)
            try #require(try await therapist.send(.PUT, "/studies/\(practice)/arms", json: Self.arms).status == .ok)
            var ids: [UUID] = []
            for address in ["ada@example.org", "ben@example.org"] {
                let (patient, id) = try await app.patient(address)
                try await app.pair(patient, with: therapist)
                ids.append(id)
            }
            let console = ConsoleBrowser(app)
            _ = try await console.signIn("berger@praxis.example")
            let form: [(String, String)] = [("kind", "commendation"), ("text", "Well done this week.")]
            // act
            let adaPage = try await console.get("/console/patients/\(ids[0])/intersession")
            let benPage = try await console.get("/console/patients/\(ids[1])/intersession")
            let toAda = try await console.post("/console/patients/\(ids[0])/interventions", form)
            let toBen = try await console.post("/console/patients/\(ids[1])/interventions", form)
            // verify
            let sendForm = "action=\"/console/patients/"
            #expect(adaPage.status == .ok && !adaPage.html.contains("id=\"control-arm\""))
            #expect(adaPage.html.contains(sendForm + "\(ids[0])/interventions\""))
            #expect(benPage.status == .ok && benPage.html.contains("id=\"control-arm\""))
            #expect(!benPage.html.contains(sendForm + "\(ids[1])/interventions\""))
            #expect(toAda.status == .seeOther)
            #expect(toBen.status == .conflict)
            #expect(toBen.html.contains("id=\"control-arm\""))
            let sent = try await InterventionRecord.query(on: app.database).all().map(\.$patient.id)
            #expect(sent == [ids[0]])
        }
    }

    @Test("eight patients pairing at once with the practice each take their own place of the log, the arms in turn")
    func pairingAtOnce() async throws {
        try await withTestApp { app in
            // setup
            let (therapist, therapistID) = try await app.staff("therapist", "berger@praxis.example")
            let practice = try await practice(of: therapistID, app)
            try #require(try await therapist.send(.PUT, "/studies/\(practice)/arms", json: Self.arms).status == .ok)
            var patients: [(APIClient, String)] = []
            for index in 0..<8 {
                let (patient, _) = try await app.patient("p\(index)@example.org")
                patients.append((patient, try await app.pairingCode(therapist)))
            }
            let pairs = patients
            // act
            let replies = try await RunningServer.parallel(app, pairs.count) { server, index in
                try await server.send(
                    pairs[index].0, .POST, "/me/pairing",
                    json: ["code": .string(pairs[index].1), "dateOfBirth": "1990-05-17", "gender": "female"])
            }
            // verify
            #expect(replies.allSatisfy { $0.status == .created }, "\(replies.map(\.text))")
            let entries = try await log(app, practice)
            #expect(entries.map(\.sequence) == Array(1...8))
            #expect(Set(entries.map(\.participantID)).count == 8)
            let arms = try await EnrollmentRecord.query(on: app.database).filter(\.$study.$id == practice).all()
                .compactMap(\.arm)
            #expect(arms.filter { $0 == "app" }.count == 4 && arms.filter { $0 == "control" }.count == 4)
        }
    }

    @Test(
        "in the console the therapist opens their practice's comparison, saves arms with a control arm, and is told what is wrong"
    )
    func console() async throws {
        try await withTestApp { app in
            // setup
            let (_, therapistID) = try await app.staff("therapist", "berger@praxis.example")
            let practice = try await practice(of: therapistID, app)
            let console = ConsoleBrowser(app)
            _ = try await console.signIn("berger@praxis.example")
            // act
            let opened = try await console.get("/console/arms")
            let page = try await console.get(try #require(opened.location))
            let saved = try await console.post(
                "/console/studies/\(practice)/arms",
                [
                    ("armName[]", "App"), ("armShare[]", "1"), ("armTarget[]", "20"), ("armReceives[]", "all"),
                    ("armName[]", "Usual care"), ("armShare[]", "1"), ("armTarget[]", "20"),
                    ("armReceives[]", "control"), ("allocation", "alternating"),
                ])
            let shown = try await console.get(try #require(saved.location))
            let refused = try await console.post(
                "/console/studies/\(practice)/arms", [("armName[]", "App"), ("allocation", "alternating")])
            // verify
            #expect(opened.status == .seeOther && page.status == .ok)
            #expect(page.html.contains("name=\"armName[]\"") && page.html.contains("Comparison"))
            #expect(saved.status == .seeOther, "\(saved.html)")
            #expect(shown.html.contains("value=\"Usual care\"") && shown.html.contains("Saved."))
            let study = try #require(try await StudyRecord.find(practice, on: app.database))
            #expect(StudyArms.names(of: study) == ["App", "Usual care"])
            #expect(StudyArms.design(of: study)?.isControl("Usual care") == true)
            #expect(StudyArms.design(of: study)?.arms.map(\.target) == [20, 20])
            #expect(refused.status == .unprocessableEntity && refused.html.contains("id=\"arms-error\""))
            #expect(
                StudyArms.names(of: try #require(try await StudyRecord.find(practice, on: app.database))).count == 2)
        }
    }
}
