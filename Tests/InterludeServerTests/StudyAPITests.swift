import Foundation
import Testing
import VaporTesting

@testable import InterludeServer

@Suite("Studies API")
struct StudyAPITests {
    static func study(_ joinMode: String, password: String? = nil, status: String = "running") -> JSONValue {
        [
            "title": .string("Stress study (\(joinMode))"), "description": "Daily stress in everyday life.",
            "consentText": "I agree to take part.", "consentVersion": "2026-1", "joinMode": .string(joinMode),
            "joinPassword": JSONValue(password), "status": .string(status),
        ]
    }

    func createStudy(_ researcher: APIClient, _ body: JSONValue) async throws -> String {
        let reply = try await researcher.send(.POST, "/studies", json: body)
        try #require(reply.status == .created, "\(reply.text)")
        return try #require(reply.body["id"].string)
    }

    @Test("a researcher opens a study; a patient lists it, accepts the consent and joins, then leaves")
    func openStudy() async throws {
        try await withTestApp { app in
            let (researcher, _) = try await app.staff("researcher", "lab@uni.example")
            let (patient, _) = try await app.patient()
            let studyID = try await createStudy(researcher, Self.study("open"))

            let listed = try await patient.send(.GET, "/studies")
            #expect(listed.status == .ok)
            #expect(listed.body.array.count == 1)
            #expect(listed.body[0]["consentVersion"].string == "2026-1")
            #expect(listed.body[0]["enrollment"].isNull)

            let outdated = try await patient.send(.POST, "/studies/\(studyID)/enrollment", json: ["consentVersion": "2025-9"])
            #expect(outdated.status == .unprocessableEntity)
            #expect(outdated.body.problemFields == ["consentVersion"])

            let joined = try await patient.send(.POST, "/studies/\(studyID)/enrollment", json: ["consentVersion": "2026-1"])
            #expect(joined.status == .created)
            #expect(joined.body["status"].string == "active")
            let twice = try await patient.send(.POST, "/studies/\(studyID)/enrollment", json: ["consentVersion": "2026-1"])
            #expect(twice.status == .conflict)
            #expect(try await patient.send(.GET, "/studies").body[0]["enrollment"]["status"].string == "active")
            #expect(try await app.count("consents WHERE document = 'studyConsent'") == 1)

            let participants = try await researcher.send(.GET, "/studies/\(studyID)/enrollments")
            #expect(participants.body.array.count == 1)
            #expect(participants.body[0]["pseudonym"].string?.hasPrefix("P-") == true)
            #expect(!participants.text.contains("patient@example.org"))

            #expect(try await patient.send(.DELETE, "/studies/\(studyID)/enrollment").status == .noContent)
            #expect(try await patient.send(.DELETE, "/studies/\(studyID)/enrollment").status == .conflict)
            #expect(try await app.count("consents WHERE revoked_at IS NOT NULL") == 1)
        }
    }

    @Test("a password study checks the password; a wrong one is refused and stores nothing")
    func passwordStudy() async throws {
        try await withTestApp { app in
            let (researcher, _) = try await app.staff("researcher", "lab@uni.example")
            let (patient, _) = try await app.patient()
            let studyID = try await createStudy(researcher, Self.study("password", password: "tinnitus"))
            let missing = try await patient.send(.POST, "/studies/\(studyID)/enrollment", json: ["consentVersion": "2026-1"])
            #expect(missing.status == .unprocessableEntity)
            #expect(missing.body.problemFields == ["password"])
            let wrong = try await patient.send(
                .POST, "/studies/\(studyID)/enrollment", json: ["consentVersion": "2026-1", "password": "guess"])
            #expect(wrong.status == .unprocessableEntity)
            #expect(try await app.count("enrollments") == 0)
            let right = try await patient.send(
                .POST, "/studies/\(studyID)/enrollment", json: ["consentVersion": "2026-1", "password": "tinnitus"])
            #expect(right.status == .created)
        }
    }

    @Test("an approval study queues the request until the researcher decides")
    func approvalStudy() async throws {
        try await withTestApp { app in
            let (researcher, _) = try await app.staff("researcher", "lab@uni.example")
            let (other, _) = try await app.staff("researcher", "other@uni.example")
            let (patient, _) = try await app.patient()
            let studyID = try await createStudy(researcher, Self.study("approval"))
            let requested = try await patient.send(.POST, "/studies/\(studyID)/enrollment", json: ["consentVersion": "2026-1"])
            #expect(requested.status == .created)
            #expect(requested.body["status"].string == "requested")
            let enrollmentID = try #require(requested.body["id"].string)
            let path = "/studies/\(studyID)/enrollments/\(enrollmentID)/decision"

            #expect(try await other.send(.POST, path, json: ["approve": true]).status == .notFound)
            #expect(try await other.send(.GET, "/studies/\(studyID)/enrollments").status == .notFound)
            #expect(try await patient.send(.POST, path, json: ["approve": true]).status == .forbidden)

            let approved = try await researcher.send(.POST, path, json: ["approve": true])
            #expect(approved.status == .ok)
            #expect(approved.body["status"].string == "active")
            #expect(try await researcher.send(.POST, path, json: ["approve": false]).status == .conflict)
            #expect(try await patient.send(.GET, "/studies").body[0]["enrollment"]["status"].string == "active")
        }
    }

    @Test("closed studies and practices cannot be joined; studies are checked like every other input")
    func refusedJoins() async throws {
        try await withTestApp { app in
            let (researcher, _) = try await app.staff("researcher", "lab@uni.example")
            _ = try await app.staff("therapist", "berger@praxis.example")
            let (patient, _) = try await app.patient()
            let closedID = try await createStudy(researcher, Self.study("open", status: "closed"))
            #expect(try await patient.send(.GET, "/studies").body.array.isEmpty)
            let closed = try await patient.send(.POST, "/studies/\(closedID)/enrollment", json: ["consentVersion": "2026-1"])
            #expect(closed.status == .conflict)
            #expect(closed.body["type"].string == "/problems/study-closed")

            let practiceID = try #require(
                try await app.sql.raw("SELECT id FROM studies WHERE join_mode = 'pairingCode'").first()?
                    .decode(column: "id", as: UUID.self))
            let practice = try await patient.send(
                .POST, "/studies/\(practiceID.uuidString)/enrollment", json: ["consentVersion": "practice"])
            #expect(practice.status == .notFound)
            #expect(try await patient.send(.POST, "/studies/\(UUID().uuidString)/enrollment", json: ["consentVersion": "1"]).status == .notFound)

            let invalid = try await researcher.send(
                .POST, "/studies",
                json: ["title": "", "consentText": "x", "consentVersion": "1", "joinMode": "password"])
            #expect(invalid.status == .unprocessableEntity)
            #expect(Set(invalid.body.problemFields) == ["title", "joinPassword"])
            let badMode = try await researcher.send(
                .POST, "/studies", json: ["title": "T", "consentText": "x", "consentVersion": "1", "joinMode": "pairingCode"])
            #expect(badMode.status == .unprocessableEntity)
            #expect(badMode.body.problemFields == ["joinMode"])
            #expect(try await app.count("studies") == 2)
        }
    }

    @Test("only researchers create studies and only the owner changes one")
    func studyRoles() async throws {
        try await withTestApp { app in
            let (researcher, _) = try await app.staff("researcher", "lab@uni.example")
            let (other, _) = try await app.staff("researcher", "other@uni.example")
            let (therapist, _) = try await app.staff("therapist", "berger@praxis.example")
            let (patient, _) = try await app.patient()
            #expect(try await therapist.send(.POST, "/studies", json: Self.study("open")).status == .forbidden)
            #expect(try await patient.send(.POST, "/studies", json: Self.study("open")).status == .forbidden)
            #expect(try await app.api.send(.POST, "/studies", json: Self.study("open")).status == .unauthorized)
            let studyID = try await createStudy(researcher, Self.study("open"))
            #expect(try await other.send(.GET, "/studies").body.array.isEmpty)
            #expect(try await other.send(.PUT, "/studies/\(studyID)", json: Self.study("approval")).status == .notFound)
            let changed = try await researcher.send(.PUT, "/studies/\(studyID)", json: Self.study("approval"))
            #expect(changed.status == .ok)
            #expect(changed.body["joinMode"].string == "approval")
            #expect(try await researcher.send(.GET, "/studies/\(studyID)").status == .ok)
            #expect(try await patient.send(.GET, "/studies/\(studyID)").status == .ok)
            #expect(try await patient.send(.DELETE, "/studies/\(studyID)/enrollment").status == .conflict)
        }
    }
}
