import Fluent
import Foundation
import InterludeCore
import Testing
import VaporTesting

@testable import InterludeServer

/// Joining a study with arms: the design allocates, the log keeps every allocation once and in order, nothing
/// tells the next one in advance, and an erasure leaves the log's places in it.
@Suite("Allocation at joining, and its log")
struct AllocationAPITests {
    /// A running open study with two arms allocated in turn, and its id.
    func studyWithArms(_ app: TestContext, allocation: String = "alternating") async throws -> (APIClient, String) {
        let (researcher, _) = try await app.staff("researcher", "lab@uni.example")
        let study = try await StudyAPITests().createStudy(
            researcher,
            StudyAPITests.study("open").merging(["arms": ["app", "control"], "allocation": .string(allocation)]))
        return (researcher, study)
    }

    func log(_ app: TestContext, _ study: String) async throws -> [AllocationRecord] {
        try await AllocationRecord.query(on: app.database).filter(\.$study.$id == UUID(uuidString: study)!)
            .sort(\.$sequence).all()
    }

    @Test("participants joining in turn alternate between the arms, each logged once with their place")
    func inTurn() async throws {
        try await withTestApp { app in
            // setup
            let (_, study) = try await studyWithArms(app)
            // act
            for index in 0..<4 {
                let (patient, _) = try await app.patient("p\(index)@example.org")
                let joined = try await StudyAPITests.join(patient, study)
                try #require(joined.status == .created, "\(joined.text)")
            }
            // verify
            let log = try await log(app, study)
            #expect(log.map(\.sequence) == [1, 2, 3, 4])
            #expect(log.map(\.arm) == ["app", "control", "app", "control"])
            #expect(log.allSatisfy { $0.kind == .drawn && $0.method == .inTurn && $0.recordedBy == nil })
            let enrolled = try await EnrollmentRecord.query(on: app.database).all()
            for entry in log {
                #expect(enrolled.first { $0.$patient.id == entry.participantID }?.arm == entry.arm)
            }
        }
    }

    @Test("nothing a researcher or a patient reads tells the design's seed or the next allocation")
    func concealed() async throws {
        try await withTestApp { app in
            // setup
            let (researcher, study) = try await studyWithArms(app, allocation: "random")
            let (patient, _) = try await app.patient()
            try #require(try await StudyAPITests.join(patient, study).status == .created)
            let stored = try #require(try await StudyRecord.find(UUID(uuidString: study), on: app.database))
            let seed = try #require(StudyArms.design(of: stored)?.seed)
            // act
            let read = [
                try await researcher.send(.GET, "/studies/\(study)"), try await researcher.send(.GET, "/studies"),
                try await patient.send(.GET, "/studies/\(study)"), try await patient.send(.GET, "/studies"),
            ]
            // verify
            for reply in read {
                #expect(reply.status == .ok)
                #expect(!reply.text.contains(String(seed)))
                #expect(!reply.text.contains("allocationDesign") && !reply.text.contains("seed"))
            }
        }
    }

    @Test("a request to join is allocated when it is approved: a declined one takes no place of the log")
    func approval() async throws {
        try await withTestApp { app in
            // setup
            let (researcher, _) = try await app.staff("researcher", "lab@uni.example")
            let study = try await StudyAPITests().createStudy(
                researcher,
                StudyAPITests.study("approval").merging(["arms": ["app", "control"], "allocation": "alternating"]))
            var requests: [String] = []
            for index in 0..<3 {
                let (patient, _) = try await app.patient("p\(index)@example.org")
                let requested = try await StudyAPITests.join(patient, study)
                try #require(requested.status == .created, "\(requested.text)")
                requests.append(try #require(requested.body["id"].string))
            }
            let waiting = try await log(app, study)
            // act: the first declined, the others approved
            var decided: [APIClient.Reply] = []
            for (index, request) in requests.enumerated() {
                decided.append(
                    try await researcher.send(
                        .POST, "/studies/\(study)/enrollments/\(request)/decision", json: ["approve": .bool(index > 0)])
                )
            }
            // verify
            #expect(waiting.isEmpty, "nothing is drawn for a request")
            #expect(decided.map(\.status) == [.ok, .ok, .ok])
            var arms: [String?] = []
            for request in requests {
                arms.append(try await EnrollmentRecord.find(UUID(uuidString: request), on: app.database)?.arm)
            }
            #expect(arms == [nil, "app", "control"])
            let log = try await log(app, study)
            #expect(log.map(\.sequence) == [1, 2])
            #expect(log.map(\.arm) == ["app", "control"])
        }
    }

    @Test("cycles of admissions are counted per practice: each clinic's patients alternate in their own cycles")
    func cyclesPerPractice() async throws {
        try await withTestApp { app in
            // setup
            let (researcher, _) = try await app.staff("researcher", "lab@uni.example")
            let study = try await StudyAPITests().createStudy(
                researcher,
                StudyAPITests.study("open").merging([
                    "arms": ["app", "control"], "allocation": "sequentialCycles",
                    "allocationSettings": ["cycleAdmissions": 1],
                ]))
            let (north, _) = try await app.staff("therapist", "north@praxis.example")
            let (south, _) = try await app.staff("therapist", "south@praxis.example")
            // act: the clinics' patients join in turn, north first
            for (index, therapist) in [north, south, north, south].enumerated() {
                let (patient, _) = try await app.patient("p\(index)@example.org")
                try await app.pair(patient, with: therapist)
                try #require(try await StudyAPITests.join(patient, study).status == .created)
            }
            // verify: one site would have alternated app, control, app, control
            let log = try await log(app, study)
            #expect(log.map(\.arm) == ["app", "app", "control", "control"])
            #expect(log.map(\.cycle) == [0, 0, 1, 1])
            #expect(Set(log.map(\.site)).count == 2 && !log.contains { $0.site.isEmpty })
        }
    }

    @Test("once every arm has its target the study takes nobody more: the join is refused and nothing is stored")
    func full() async throws {
        try await withTestApp { app in
            // setup
            let (_, study) = try await studyWithArms(app)
            let record = try #require(try await StudyRecord.find(UUID(uuidString: study), on: app.database))
            var design = try #require(StudyArms.design(of: record))
            design.arms = [AllocationArm("app", target: 1), AllocationArm("control", target: 1)]
            record.allocationDesign = String(decoding: try JSONEncoder().encode(design), as: UTF8.self)
            try await record.save(on: app.database)
            for index in 0..<2 {
                let (patient, _) = try await app.patient("p\(index)@example.org")
                try #require(try await StudyAPITests.join(patient, study).status == .created)
            }
            let (late, lateID) = try await app.patient("late@example.org")
            // act
            let refused = try await StudyAPITests.join(late, study)
            // verify
            #expect(refused.status == .conflict)
            #expect(try refused.decoded(Components.Schemas.Problem.self)._type == "/problems/study-full")
            #expect(try await EnrollmentRecord.query(on: app.database).filter(\.$patient.$id == lateID).count() == 0)
            #expect(
                try await ConsentRecord.query(on: app.database).filter(\.$user.$id == lateID)
                    .filter(\.$study.$id == record.requireID()).count() == 0)
            #expect(try await log(app, study).map(\.arm).sorted() == ["app", "control"])
        }
    }

    @Test("a person's copy holds their allocation; erasing their study data keeps its place in the log, without them")
    func erasure() async throws {
        try await withTestApp { app in
            // setup
            let (_, study) = try await studyWithArms(app)
            let (ada, adaID) = try await app.patient("ada@example.org")
            let (ben, _) = try await app.patient("ben@example.org")
            try #require(try await StudyAPITests.join(ada, study).status == .created)
            try #require(try await StudyAPITests.join(ben, study).status == .created)
            let user = try #require(try await UserRecord.find(adaID, on: app.database))
            let copy = try await PersonalData.collect(of: user, on: app.database, services: app.app.interlude)
            #expect(copy.tables[AllocationRecord.schema]?.count == 1)
            // act
            let left = try await ada.send(.DELETE, "/studies/\(study)/enrollment?erase=true")
            // verify
            #expect(left.status == .noContent || left.status == .ok, "\(left.text)")
            let log = try await log(app, study)
            #expect(log.map(\.sequence) == [1, 2])
            #expect(!log.contains { $0.participantID == adaID })
            #expect(log[0].arm == "app" && log[0].levels == "{}")
            let (cleo, _) = try await app.patient("cleo@example.org")
            let joined = try await StudyAPITests.join(cleo, study)
            #expect(joined.status == .created)
            #expect(try await self.log(app, study).map(\.arm) == ["app", "control", "app"])
        }
    }
}

extension AllocationAPITests {
    @Test(
        "a correction is a new entry with its reason and moves the participant; a wrong one is refused, naming the field"
    )
    func correction() async throws {
        try await withTestApp { app in
            // setup
            let (researcher, study) = try await studyWithArms(app)
            let (patient, patientID) = try await app.patient()
            try #require(try await StudyAPITests.join(patient, study).status == .created)
            let enrollment = try #require(
                try await EnrollmentRecord.query(on: app.database).filter(\.$patient.$id == patientID).first())
            let enrollmentID = try enrollment.requireID().uuidString
            func correct(_ arm: String, _ reason: String) async throws -> APIClient.Reply {
                try await researcher.send(
                    .POST, "/studies/\(study)/allocations",
                    json: ["enrollmentId": .string(enrollmentID), "arm": .string(arm), "reason": .string(reason)])
            }
            // act
            let same = try await correct("app", "Typed twice.")
            let unknown = try await correct("waitlist", "Typed twice.")
            let corrected = try await correct("control", "Screening showed an exclusion for the app arm.")
            // verify
            #expect(same.status == .unprocessableEntity)
            #expect(try StudyAPITests.fields(same) == ["arm"])
            #expect(unknown.status == .unprocessableEntity)
            #expect(try StudyAPITests.fields(unknown) == ["arm"])
            #expect(corrected.status == .created, "\(corrected.text)")
            #expect(corrected.body["sequence"].int == 2 && corrected.body["kind"].string == "corrected")
            #expect(corrected.body["reason"].string == "Screening showed an exclusion for the app arm.")
            let log = try await log(app, study)
            #expect(log.map(\.arm) == ["app", "control"])
            #expect(log.map(\.kind) == [.drawn, .corrected])
            #expect(try await EnrollmentRecord.find(enrollment.id, on: app.database)?.arm == "control")
            let audited = try await AuditEventRecord.query(on: app.database)
                .filter(\.$action == AuditAction.allocationCorrected.rawValue).count()
            #expect(audited == 1)
        }
    }

    @Test("the allocation list with its seed is refused while the study runs and given once it is closed")
    func listAfterClosing() async throws {
        try await withTestApp { app in
            // setup
            let (researcher, study) = try await studyWithArms(app, allocation: "random")
            for index in 0..<3 {
                let (patient, _) = try await app.patient("p\(index)@example.org")
                try #require(try await StudyAPITests.join(patient, study).status == .created)
            }
            let running = try await researcher.send(.GET, "/studies/\(study)/allocations")
            let record = try #require(try await StudyRecord.find(UUID(uuidString: study), on: app.database))
            let seed = try #require(StudyArms.design(of: record)?.seed)
            record.status = .closed
            try await record.save(on: app.database)
            // act
            let closed = try await researcher.send(.GET, "/studies/\(study)/allocations")
            // verify
            #expect(running.status == .conflict)
            #expect(try running.decoded(Components.Schemas.Problem.self)._type == "/problems/study-running")
            #expect(closed.status == .ok, "\(closed.text)")
            let list = try closed.decoded(Components.Schemas.AllocationList.self)
            #expect(list.seed == String(seed))
            #expect(list.entries.map(\.sequence) == [1, 2, 3])
            #expect(list.entries.allSatisfy { $0.method == .random && $0.probability == 0.5 && $0.pseudonym != nil })
            let armless = try await StudyAPITests().createStudy(
                researcher, StudyAPITests.study("open", status: "closed"))
            #expect(try await researcher.send(.GET, "/studies/\(armless)/allocations").status == .notFound)
        }
    }
}

extension AllocationAPITests {
    @Test("a study with targets per arm in permuted blocks shows its settings to staff, fills each arm, then is full")
    func settingsThroughTheAPI() async throws {
        try await withTestApp { app in
            // setup
            let (researcher, _) = try await app.staff("researcher", "lab@uni.example")
            let body = StudyAPITests.study("open").merging([
                "arms": ["app", "control"], "allocation": "permutedBlocks",
                "allocationSettings": ["targets": [2, 2], "blockMultiples": [1]],
            ])
            let refused = try await researcher.send(
                .POST, "/studies",
                json: body.merging(["allocationSettings": ["cycleStart": "someday"]]))
            let study = try await StudyAPITests().createStudy(researcher, body)
            // act
            var joins: [HTTPStatus] = []
            for index in 0..<5 {
                let (patient, _) = try await app.patient("p\(index)@example.org")
                joins.append(try await StudyAPITests.join(patient, study).status)
            }
            let (patient, _) = try await app.patient("reader@example.org")
            let asStaff = try await researcher.send(.GET, "/studies/\(study)")
            let asPatient = try await patient.send(.GET, "/studies/\(study)")
            // verify
            #expect(refused.status == .unprocessableEntity)
            #expect(try StudyAPITests.fields(refused) == ["allocationSettings.cycleStart"], "\(refused.text)")
            #expect(joins == [.created, .created, .created, .created, .conflict])
            #expect(try await log(app, study).map(\.arm).sorted() == ["app", "app", "control", "control"])
            #expect(try await log(app, study).allSatisfy { $0.method == .permutedBlocks && $0.block != nil })
            #expect(asStaff.body["allocation"].string == "permutedBlocks")
            #expect(asStaff.body["allocationSettings"]["targets"].array.map(\.int) == [2, 2])
            #expect(!asStaff.text.contains("seed"))
            #expect(asPatient.status == .ok && asPatient.body["allocation"].isNull)
            let console = ConsoleBrowser(app)
            _ = try await console.signIn("lab@uni.example")
            let page = try await console.get("/console/studies/\(study)")
            #expect(page.html.contains("id=\"study-full\""))
            #expect(page.html.contains("<th scope=\"row\">app</th><td>2 of 2</td>"))
            #expect(page.html.contains("Allocation: Permuted blocks"))
        }
    }

    @Test("a setting out of range or a cycle without its length is refused, naming the setting; nothing is stored")
    func settingsRefused() async throws {
        try await withTestApp { app in
            // setup
            let (researcher, _) = try await app.staff("researcher", "lab@uni.example")
            let base = StudyAPITests.study("open").merging(["arms": ["app", "control"]])
            let studies = try await app.count("studies")
            // act
            let ratios = try await researcher.send(
                .POST, "/studies",
                json: base.merging(["allocation": "random", "allocationSettings": ["ratios": [0, 1]]]))
            let cycles = try await researcher.send(
                .POST, "/studies", json: base.merging(["allocation": "sequentialCycles"]))
            // verify
            #expect(ratios.status == .unprocessableEntity)
            #expect(try StudyAPITests.fields(ratios) == ["allocationSettings.ratios.0"])
            #expect(cycles.status == .unprocessableEntity)
            #expect(try StudyAPITests.fields(cycles) == ["allocationSettings.cycleDays"])
            #expect(try await app.count("studies") == studies)
        }
    }
}

extension AllocationAPITests {
    @Test("the console's study form shows a method it has no settings for as chosen, and saving keeps its settings")
    func consoleKeepsSettings() async throws {
        try await withTestApp { app in
            // setup
            let (researcher, _) = try await app.staff("researcher", "lab@uni.example")
            let study = try await StudyAPITests().createStudy(
                researcher,
                StudyAPITests.study("open").merging([
                    "arms": ["app", "control"], "allocation": "sequentialCycles",
                    "allocationSettings": ["cycleAdmissions": 4, "targets": [20, 20]],
                ]))
            let console = ConsoleBrowser(app)
            _ = try await console.signIn("lab@uni.example")
            let path = "/console/studies/\(study)/edit"
            // act
            let form = try await console.get(path)
            let saved = try await console.post(
                path,
                [
                    ("title", "Stress study"), ("description", ""), ("consentText", "I agree to take part."),
                    ("consentVersion", "2026-1"), ("joinMode", "open"), ("status", "running"),
                    ("arms", "app, control"), ("allocation", "sequentialCycles"),
                ])
            // verify
            #expect(form.html.contains("<option value=\"sequentialCycles\" selected>"))
            #expect(!form.html.contains("value=\"minimisation\""))
            #expect(saved.status == .seeOther)
            let record = try #require(try await StudyRecord.find(UUID(uuidString: study), on: app.database))
            let design = try #require(StudyArms.design(of: record))
            #expect(design.method == .sequentialCycles(.admissions(4), drawnStart: false))
            #expect(design.arms.map(\.target) == [20, 20])
        }
    }
}
