import Fluent
import Foundation
import InterludeCore
import Testing
import VaporTesting

@testable import InterludeServer

/// Integrity under truly parallel requests against a running server: what the database must hold once is held
/// once, by its constraints, and every request gets an answer that says what happened — never a 500.
@Suite("Races keep integrity", .serialized)
struct ConcurrencyTests {
    static let parallelism = 24

    /// A paired patient with one open mood prompt.
    func promptOfAPatient(_ app: TestContext) async throws -> (patient: APIClient, promptID: String) {
        let (therapist, _) = try await app.staff("therapist", "berger@praxis.example")
        let (patient, patientID) = try await app.patient(name: "Ada")
        try await app.pair(patient, with: therapist)
        let prompt = try await therapist.send(
            .POST, "/patients/\(patientID)/prompts",
            json: [
                "instrumentKey": "mood-vas", "opensAt": QuestionnaireAPITests.iso(app.clock.now),
                "closesAt": QuestionnaireAPITests.iso(app.clock.now.addingTimeInterval(3600)),
            ])
        return (patient, try #require(prompt.body["id"].string))
    }

    static func submission(_ id: UUID, prompt: String, at date: Date) -> JSONValue {
        [
            "id": .string(id.uuidString), "promptId": .string(prompt), "instrumentKey": "mood-vas", "version": 1,
            "answers": ["mood": 50], "completedAt": QuestionnaireAPITests.iso(date),
        ]
    }

    @Test("an identical sync batch sent many times at once applies each mutation once; the others answer as replays")
    func identicalSyncBatches() async throws {
        try await withTestApp { app in
            // setup
            let (patient, promptID) = try await promptOfAPatient(app)
            let batch: JSONValue = [
                "mutations": [
                    [
                        "id": .string(UUID().uuidString.lowercased()), "type": "appointment.create",
                        "appointment": SyncTests.appointment(app, title: "Offline", days: 1, hour: 9),
                    ],
                    [
                        "id": .string(UUID().uuidString.lowercased()), "type": "response",
                        "response": Self.submission(UUID(), prompt: promptID, at: app.clock.now),
                    ],
                ]
            ]
            // act
            let replies = try await RunningServer.parallel(app, Self.parallelism) { server, _ in
                try await server.send(patient, .POST, "/sync", json: batch)
            }
            // verify
            #expect(replies.allSatisfy { $0.status == .ok }, "\(replies.map(\.status.code))")
            let statuses = replies.map {
                [$0.body["results"][0]["status"].string, $0.body["results"][1]["status"].string]
            }
            #expect(statuses.allSatisfy { $0 == ["applied", "applied"] }, "\(statuses)")
            let replayed = replies.filter { $0.body["results"][0]["replayed"].bool == true }.count
            #expect(replayed == Self.parallelism - 1)
            #expect(try await app.count("appointments") == 1)
            #expect(try await app.count("responses") == 1)
        }
    }

    @Test("one prompt never gets two responses: of different submissions sent at once, one is taken, the rest refused")
    func oneResponsePerPrompt() async throws {
        try await withTestApp { app in
            // setup
            let (patient, promptID) = try await promptOfAPatient(app)
            // act
            let replies = try await RunningServer.parallel(app, Self.parallelism) { server, _ in
                try await server.send(
                    patient, .POST, "/me/responses", json: Self.submission(UUID(), prompt: promptID, at: app.clock.now))
            }
            // verify
            #expect(replies.filter { $0.status == .created }.count == 1)
            #expect(
                replies.filter { $0.status == .conflict }.count == Self.parallelism - 1, "\(replies.map(\.status.code))"
            )
            #expect(try await app.count("responses") == 1)
        }
    }

    @Test("an identical submission sent many times at once is stored once, and every retry gets the first result")
    func identicalRetries() async throws {
        try await withTestApp { app in
            // setup
            let (patient, promptID) = try await promptOfAPatient(app)
            let id = UUID()
            // act
            let replies = try await RunningServer.parallel(app, Self.parallelism) { server, _ in
                try await server.send(
                    patient, .POST, "/me/responses", json: Self.submission(id, prompt: promptID, at: app.clock.now))
            }
            // verify
            #expect(replies.filter { $0.status == .created }.count == 1)
            #expect(replies.filter { $0.status == .ok }.count == Self.parallelism - 1, "\(replies.map(\.status.code))")
            #expect(Set(replies.compactMap { $0.body["id"].string }) == [id.uuidString.lowercased()])
            #expect(try await app.count("responses") == 1)
        }
    }

    @Test("a patient redeeming many codes at once is paired with one therapist, once")
    func onePairing() async throws {
        try await withTestApp { app in
            // setup
            var codes: [String] = []
            for number in 0..<Self.parallelism {
                let (therapist, _) = try await app.staff("therapist", "therapist-\(number)@praxis.example")
                codes.append(try await app.pairingCode(therapist))
            }
            let (patient, patientID) = try await app.patient(name: "Ada")
            let issued = codes
            // act
            let replies = try await RunningServer.parallel(app, Self.parallelism) { server, index in
                try await server.send(
                    patient, .POST, "/me/pairing",
                    json: ["code": .string(issued[index]), "dateOfBirth": "1990-05-17", "gender": "female"])
            }
            // verify
            #expect(replies.filter { $0.status == .created }.count == 1)
            #expect(
                replies.filter { $0.status == .conflict }.count == Self.parallelism - 1, "\(replies.map(\.status.code))"
            )
            let active = try await EnrollmentRecord.query(on: app.database).filter(\.$patient.$id == patientID)
                .filter(\.$status == EnrollmentStatus.active).all()
            #expect(active.count == 1)
            #expect(try await PairingCodeRecord.query(on: app.database).filter(\.$redeemedAt != nil).count() == 1)
        }
    }

    @Test("joining a study many times at once makes one membership")
    func oneMembership() async throws {
        try await withTestApp { app in
            // setup
            let (researcher, _) = try await app.staff("researcher", "lab@uni.example")
            let study = try await StudyAPITests().createStudy(researcher, StudyAPITests.study("open"))
            let (patient, patientID) = try await app.patient(name: "Ada")
            // act
            let replies = try await RunningServer.parallel(app, Self.parallelism) { server, _ in
                try await server.send(
                    patient, .POST, "/studies/\(study)/enrollment", json: ["consentVersion": "2026-1"])
            }
            // verify
            #expect(replies.filter { $0.status == .created }.count == 1)
            #expect(
                replies.filter { $0.status == .conflict }.count == Self.parallelism - 1, "\(replies.map(\.status.code))"
            )
            #expect(try await EnrollmentRecord.query(on: app.database).filter(\.$patient.$id == patientID).count() == 1)
        }
    }

    @Test("participants joining a study with arms all at once each take one place of the allocation log, in turn")
    func allocationsAtOnce() async throws {
        try await withTestApp { app in
            // setup
            let (researcher, _) = try await app.staff("researcher", "lab@uni.example")
            let study = try await StudyAPITests().createStudy(
                researcher,
                StudyAPITests.study("open").merging(["arms": ["app", "control"], "allocation": "alternating"]))
            var patients: [APIClient] = []
            for index in 0..<Self.parallelism / 2 {
                patients.append(try await app.patient("p\(index)@example.org").client)
            }
            let joining = patients
            // act
            let replies = try await RunningServer.parallel(app, joining.count) { server, index in
                try await server.send(
                    joining[index], .POST, "/studies/\(study)/enrollment", json: ["consentVersion": "2026-1"])
            }
            // verify
            #expect(replies.allSatisfy { $0.status == .created }, "\(replies.map(\.status.code))")
            let log = try await AllocationRecord.query(on: app.database).sort(\.$sequence).all()
            #expect(log.map(\.sequence) == Array(1...joining.count))
            #expect(log.map(\.slot) == Array(0..<joining.count))
            #expect(log.filter { $0.arm == "app" }.count == joining.count / 2)
            let arms = try await EnrollmentRecord.query(on: app.database).all()
            #expect(Set(arms.map(\.$patient.id)) == Set(log.map(\.participantID)))
            for entry in log { #expect(arms.first { $0.$patient.id == entry.participantID }?.arm == entry.arm) }
        }
    }

    @Test("a crisis alert acknowledged many times at once is acknowledged once, with one note; the rest are told so")
    func oneAcknowledgement() async throws {
        try await withTestApp { app in
            // setup
            let (therapist, patient, patientID) = try await InterventionTests().paired(app)
            _ = try await InterventionTests().answer(
                app, therapist: therapist, patient: patient, patientID: patientID,
                answers: QuestionnaireAPITests.phqAnswers([1, 1, 0, 0, 0, 0, 0, 0, 2]))
            let alertID = try #require(try await therapist.send(.GET, "/alerts").body[0]["id"].string)
            // act
            let replies = try await RunningServer.parallel(app, Self.parallelism) { server, index in
                try await server.send(
                    therapist, .POST, "/alerts/\(alertID)/acknowledgement", json: ["note": .string("Call \(index)")])
            }
            // verify
            let accepted = replies.filter { $0.status == .ok }
            #expect(accepted.count == 1)
            #expect(
                replies.filter { $0.status == .conflict }.count == Self.parallelism - 1, "\(replies.map(\.status.code))"
            )
            let stored = try await therapist.send(.GET, "/alerts").body[0]
            #expect(stored["note"].string == accepted.first?.body["note"].string)
        }
    }

    @Test("a task completed many times at once is completed once; the others are told it already is")
    func oneCompletion() async throws {
        try await withTestApp { app in
            // setup
            let (therapist, patient, patientID) = try await InterventionTests().paired(app)
            let sent = try await therapist.send(
                .POST, "/patients/\(patientID.uuidString)/interventions",
                json: ["kind": "task", "text": "Take a walk."])
            let id = try #require(sent.body["id"].string)
            // act
            let replies = try await RunningServer.parallel(app, Self.parallelism) { server, _ in
                try await server.send(patient, .POST, "/me/interventions/\(id)/completion")
            }
            // verify
            #expect(replies.filter { $0.status == .ok }.count == 1)
            #expect(
                replies.filter { $0.status == .conflict }.count == Self.parallelism - 1, "\(replies.map(\.status.code))"
            )
            let stored = try #require(try await InterventionRecord.find(UUID(uuidString: id), on: app.database))
            #expect(stored.completedAt != nil)
            #expect(stored.seenAt != nil)
        }
    }

    @Test("approvals and declines of one request sent at once decide it once, one way")
    func oneDecision() async throws {
        try await withTestApp { app in
            // setup
            let (researcher, _) = try await app.staff("researcher", "lab@uni.example")
            let (patient, _) = try await app.patient()
            let studyID = try await StudyAPITests().createStudy(researcher, StudyAPITests.study("approval"))
            let requested = try await patient.send(
                .POST, "/studies/\(studyID)/enrollment", json: ["consentVersion": "2026-1"])
            let path = "/studies/\(studyID)/enrollments/\(try #require(requested.body["id"].string))/decision"
            // act
            let replies = try await RunningServer.parallel(app, Self.parallelism) { server, index in
                try await server.send(researcher, .POST, path, json: ["approve": .bool(index.isMultiple(of: 2))])
            }
            // verify
            let decided = try #require(replies.first { $0.status == .ok })
            #expect(replies.filter { $0.status == .ok }.count == 1)
            #expect(
                replies.filter { $0.status == .conflict }.count == Self.parallelism - 1, "\(replies.map(\.status.code))"
            )
            let stored = try #require(try await EnrollmentRecord.query(on: app.database).first())
            #expect(stored.status.rawValue == decided.body["status"].string)
            let audited = try await AuditEventRecord.query(on: app.database).filter(
                \.$action == AuditAction.enrollmentDecided.rawValue
            ).count()
            #expect(audited == 1)
        }
    }

    @Test(
        "the same new thought sent from many devices at once in other spellings makes one thought with every occurrence"
    )
    func oneThoughtPerWords() async throws {
        try await withTestApp { app in
            // setup
            let (patient, patientID) = try await app.patient(name: "Ada")
            // act
            let replies = try await RunningServer.parallel(app, Self.parallelism) { server, index in
                let text = index % 2 == 0 ? "Nobody listens to me" : "  nobody LISTENS to me"
                return try await server.send(
                    patient, .POST, "/me/thoughts/occurrences", json: ThoughtAPITests.occurrence(app, text: text))
            }
            // verify
            #expect(replies.allSatisfy { $0.status == .created }, "\(replies.map(\.status.code))")
            #expect(Set(replies.compactMap { $0.body["thought"]["id"].string }).count == 1)
            let kinds = try await EntryRecord.query(on: app.database).filter(\.$patient.$id == patientID).all().map(
                \.kind)
            #expect(
                kinds.filter { $0 == .thought }.count == 1
                    && kinds.filter { $0 == .thoughtOccurrence }.count == Self.parallelism)
        }
    }
}
