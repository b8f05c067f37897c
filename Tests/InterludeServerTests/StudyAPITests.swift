import Foundation
import InterludeCore
import Testing
import VaporTesting

@testable import InterludeServer

@Suite("Studies API")
struct StudyAPITests {
    typealias Study = Components.Schemas.Study
    typealias Enrollment = Components.Schemas.Enrollment
    typealias Participant = Components.Schemas.Participant
    typealias Problem = Components.Schemas.Problem

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
        return try reply.decoded(Study.self).id
    }

    static func join(_ patient: APIClient, _ studyID: String, _ body: JSONValue = ["consentVersion": "2026-1"])
        async throws -> APIClient.Reply
    {
        try await patient.send(.POST, "/studies/\(studyID)/enrollment", json: body)
    }

    static func fields(_ reply: APIClient.Reply) throws -> Set<String> {
        Set(try reply.decoded(Problem.self).errors?.map(\.field) ?? [])
    }

    @Test("a patient lists an open study with its consent and without an enrollment")
    func listsOpenStudy() async throws {
        try await withTestApp { app in
            // setup
            let (researcher, _) = try await app.staff("researcher", "lab@uni.example")
            let (patient, _) = try await app.patient()
            _ = try await createStudy(researcher, Self.study("open"))
            // act
            let listed = try await patient.send(.GET, "/studies")
            // verify
            let studies = try listed.decoded([Study].self)
            #expect(studies.map(\.consentVersion) == ["2026-1"])
            #expect(studies.first?.enrollment == nil)
        }
    }

    @Test("a study written in English and German reads in both, with the consent in force in each")
    func bothLanguages() async throws {
        try await withTestApp { app in
            // setup
            let (researcher, _) = try await app.staff("researcher", "lab@uni.example")
            let (patient, _) = try await app.patient()
            let body: JSONValue = [
                "titles": ["en": "Stress study", "de": "Stress-Studie"], "description": "Daily stress.",
                "descriptions": ["de": "Stress im Alltag."],
                "consentTexts": ["en": "I agree.", "de": "Ich stimme zu."],
                "consentVersion": "2026-1", "joinMode": "open",
            ]

            // act
            let studyID = try await createStudy(researcher, body)
            let listed = try await patient.send(.GET, "/studies").decoded([Study].self)

            // verify: the plain fields hold English; a plain text and a per-language one join
            let study = try #require(listed.first { $0.id == studyID })
            #expect(study.title == "Stress study")
            #expect(study.titles.de == "Stress-Studie")
            #expect(study.description == "Daily stress.")
            #expect(study.descriptions.en == "Daily stress." && study.descriptions.de == "Stress im Alltag.")
            #expect(study.consentTexts?.de == "Ich stimme zu." && study.consentTexts?.en == "I agree.")
            #expect(study.consentText == "I agree.")
        }
    }

    @Test("accepting the current consent joins an open study once and records the consent")
    func joinsOpenStudy() async throws {
        try await withTestApp { app in
            // setup
            let (researcher, _) = try await app.staff("researcher", "lab@uni.example")
            let (patient, _) = try await app.patient()
            let studyID = try await createStudy(researcher, Self.study("open"))
            // act
            let joined = try await Self.join(patient, studyID)
            let twice = try await Self.join(patient, studyID)
            // verify
            #expect(joined.status == .created)
            #expect(try joined.decoded(Enrollment.self).status == .active)
            #expect(twice.status == .conflict)
            #expect(try await patient.send(.GET, "/studies").decoded([Study].self).first?.enrollment?.status == .active)
            #expect(try await app.count("consents WHERE document = 'studyConsent'") == 1)
        }
    }

    @Test("the researcher sees participants by pseudonym, never by address")
    func participantsArePseudonymous() async throws {
        try await withTestApp { app in
            // setup
            let (researcher, _) = try await app.staff("researcher", "lab@uni.example")
            let (patient, _) = try await app.patient()
            let studyID = try await createStudy(researcher, Self.study("open"))
            _ = try await Self.join(patient, studyID)
            // act
            let reply = try await researcher.send(.GET, "/studies/\(studyID)/enrollments")
            // verify
            let participants = try reply.decoded([Participant].self)
            #expect(participants.count == 1)
            #expect(participants.allSatisfy { Pseudonym.isWellFormed($0.pseudonym) })
            #expect(!reply.text.contains("patient@example.org"))
        }
    }

    @Test("leaving revokes the consent; leaving again is a conflict")
    func leaves() async throws {
        try await withTestApp { app in
            // setup
            let (researcher, _) = try await app.staff("researcher", "lab@uni.example")
            let (patient, _) = try await app.patient()
            let studyID = try await createStudy(researcher, Self.study("open"))
            _ = try await Self.join(patient, studyID)
            // act
            let left = try await patient.send(.DELETE, "/studies/\(studyID)/enrollment")
            let again = try await patient.send(.DELETE, "/studies/\(studyID)/enrollment")
            // verify
            #expect(left.status == .noContent)
            #expect(again.status == .conflict)
            #expect(try await app.count("consents WHERE revoked_at IS NOT NULL") == 1)
        }
    }

    /// Joins that are refused, with the field each names; none leaves an enrollment behind.
    static let refusedJoins: [(joinMode: String, body: JSONValue, field: String)] = [
        ("open", ["consentVersion": "2025-9"], "consentVersion"),
        ("password", ["consentVersion": "2026-1"], "password"),
        ("password", ["consentVersion": "2026-1", "password": "guess"], "password"),
    ]

    @Test(
        "a join with an outdated consent or a missing or wrong password is refused and stores nothing",
        arguments: refusedJoins)
    func refusedJoin(_ joinMode: String, _ body: JSONValue, _ field: String) async throws {
        try await withTestApp { app in
            // setup
            let (researcher, _) = try await app.staff("researcher", "lab@uni.example")
            let (patient, _) = try await app.patient()
            let studyID = try await createStudy(researcher, Self.study(joinMode, password: "tinnitus"))
            // act
            let refused = try await Self.join(patient, studyID, body)
            // verify
            #expect(refused.status == .unprocessableEntity)
            #expect(try Self.fields(refused) == [field])
            #expect(try await app.count("enrollments") == 0)
        }
    }

    @Test("the right password joins a password study")
    func passwordJoins() async throws {
        try await withTestApp { app in
            // setup
            let (researcher, _) = try await app.staff("researcher", "lab@uni.example")
            let (patient, _) = try await app.patient()
            let studyID = try await createStudy(researcher, Self.study("password", password: "tinnitus"))
            // act
            let joined = try await Self.join(patient, studyID, ["consentVersion": "2026-1", "password": "tinnitus"])
            // verify
            #expect(joined.status == .created)
            #expect(try joined.decoded(Enrollment.self).status == .active)
        }
    }

    @Test("an approval study's request waits until its owner approves it, once")
    func approval() async throws {
        try await withTestApp { app in
            // setup
            let (researcher, _) = try await app.staff("researcher", "lab@uni.example")
            let (patient, _) = try await app.patient()
            let studyID = try await createStudy(researcher, Self.study("approval"))
            let requested = try await Self.join(patient, studyID)
            let enrollment = try requested.decoded(Enrollment.self)
            let path = "/studies/\(studyID)/enrollments/\(enrollment.id)/decision"
            // act
            let approved = try await researcher.send(.POST, path, json: ["approve": true])
            let again = try await researcher.send(.POST, path, json: ["approve": false])
            // verify
            #expect(enrollment.status == .requested)
            #expect(try approved.decoded(Participant.self).status == .active)
            #expect(again.status == .conflict)
            #expect(try await patient.send(.GET, "/studies").decoded([Study].self).first?.enrollment?.status == .active)
        }
    }

    /// Who may not decide or list an approval study's requests, and what they are told.
    static let refusedDeciders: [(who: String, operation: String, status: HTTPResponseStatus)] = [
        ("other researcher", "decide", .notFound),
        ("other researcher", "list", .notFound),
        ("patient", "decide", .forbidden),
    ]

    @Test("only the owner decides and lists requests; another researcher learns nothing", arguments: refusedDeciders)
    func refusedDecision(_ who: String, _ operation: String, _ status: HTTPResponseStatus) async throws {
        try await withTestApp { app in
            // setup
            let (researcher, _) = try await app.staff("researcher", "lab@uni.example")
            let (other, _) = try await app.staff("researcher", "other@uni.example")
            let (patient, _) = try await app.patient()
            let studyID = try await createStudy(researcher, Self.study("approval"))
            let enrollment = try await Self.join(patient, studyID).decoded(Enrollment.self)
            let actor = who == "patient" ? patient : other
            // act
            let reply =
                operation == "decide"
                ? try await actor.send(
                    .POST, "/studies/\(studyID)/enrollments/\(enrollment.id)/decision", json: ["approve": true])
                : try await actor.send(.GET, "/studies/\(studyID)/enrollments")
            // verify
            #expect(reply.status == status)
            #expect(try await app.count("enrollments WHERE status = 'requested'") == 1)
        }
    }

    @Test("a closed study is not listed and refuses joins with study-closed")
    func closedStudy() async throws {
        try await withTestApp { app in
            // setup
            let (researcher, _) = try await app.staff("researcher", "lab@uni.example")
            let (patient, _) = try await app.patient()
            let closedID = try await createStudy(researcher, Self.study("open", status: "closed"))
            // act
            let listed = try await patient.send(.GET, "/studies")
            let refused = try await Self.join(patient, closedID)
            // verify
            #expect(try listed.decoded([Study].self).isEmpty)
            #expect(refused.status == .conflict)
            #expect(try refused.decoded(Problem.self)._type == "/problems/study-closed")
        }
    }

    @Test("a practice and an unknown study cannot be joined as studies")
    func practiceIsNoStudy() async throws {
        try await withTestApp { app in
            // setup
            _ = try await app.staff("therapist", "berger@praxis.example")
            let (patient, _) = try await app.patient()
            let practiceID = try #require(
                try await app.sql.raw("SELECT id FROM studies WHERE join_mode = 'pairingCode'").first()?
                    .decode(column: "id", as: UUID.self))
            // act
            let practice = try await Self.join(patient, practiceID.uuidString, ["consentVersion": "practice"])
            let unknown = try await Self.join(patient, UUID().uuidString, ["consentVersion": "1"])
            // verify
            #expect(practice.status == .notFound)
            #expect(unknown.status == .notFound)
        }
    }

    /// Study inputs that are refused, with the fields each names.
    static let invalidStudies: [(body: JSONValue, fields: Set<String>)] = [
        (["title": "", "consentText": "x", "consentVersion": "1", "joinMode": "password"], ["title", "joinPassword"]),
        (["title": "T", "consentText": "x", "consentVersion": "1", "joinMode": "pairingCode"], ["joinMode"]),
        (
            [
                "titles": ["en": "T", "de": .string(String(repeating: "t", count: 201))], "consentText": "Ja",
                "descriptions": ["de": .string(String(repeating: "d", count: 5001))], "consentVersion": "1",
                "joinMode": "open",
            ], ["titles.de", "descriptions.de"]
        ),
        (["consentVersion": "1", "joinMode": "open", "consentText": "x"], ["title"]),
    ]

    @Test("a study is checked like every other input and nothing is stored", arguments: invalidStudies)
    func invalidStudy(_ body: JSONValue, _ fields: Set<String>) async throws {
        try await withTestApp { app in
            // setup
            let (researcher, _) = try await app.staff("researcher", "lab@uni.example")
            // act
            let refused = try await researcher.send(.POST, "/studies", json: body)
            // verify
            #expect(refused.status == .unprocessableEntity)
            #expect(try Self.fields(refused) == fields, "\(refused.text)")
            #expect(try await app.count("studies WHERE join_mode <> 'pairingCode'") == 0)
        }
    }

    /// Who may not create a study, and what they are told.
    static let refusedCreators: [(role: String?, status: HTTPResponseStatus)] = [
        ("therapist", .forbidden), ("patient", .forbidden), (nil, .unauthorized),
    ]

    @Test("only researchers create studies", arguments: refusedCreators)
    func refusedCreator(_ role: String?, _ status: HTTPResponseStatus) async throws {
        try await withTestApp { app in
            // setup
            let client: APIClient
            switch role {
            case "therapist": client = try await app.staff("therapist", "berger@praxis.example").client
            case "patient": client = try await app.patient().client
            default: client = app.api
            }
            // act
            let reply = try await client.send(.POST, "/studies", json: Self.study("open"))
            // verify
            #expect(reply.status == status)
            #expect(try await app.count("studies WHERE join_mode <> 'pairingCode'") == 0)
        }
    }

    @Test("only the owner changes a study; another researcher neither lists nor changes it")
    func ownerChanges() async throws {
        try await withTestApp { app in
            // setup
            let (researcher, _) = try await app.staff("researcher", "lab@uni.example")
            let (other, _) = try await app.staff("researcher", "other@uni.example")
            let studyID = try await createStudy(researcher, Self.study("open"))
            // act
            let listedByOther = try await other.send(.GET, "/studies")
            let changedByOther = try await other.send(.PUT, "/studies/\(studyID)", json: Self.study("approval"))
            let changed = try await researcher.send(.PUT, "/studies/\(studyID)", json: Self.study("approval"))
            // verify
            #expect(try listedByOther.decoded([Study].self).isEmpty)
            #expect(changedByOther.status == .notFound)
            #expect(try changed.decoded(Study.self).joinMode == .approval)
        }
    }

    @Test("a patient reads a study, and leaving one never joined is a conflict")
    func patientReadsStudy() async throws {
        try await withTestApp { app in
            // setup
            let (researcher, _) = try await app.staff("researcher", "lab@uni.example")
            let (patient, _) = try await app.patient()
            let studyID = try await createStudy(researcher, Self.study("open"))
            // act
            let read = try await patient.send(.GET, "/studies/\(studyID)")
            let left = try await patient.send(.DELETE, "/studies/\(studyID)/enrollment")
            // verify
            #expect(try read.decoded(Study.self).id == studyID)
            #expect(left.status == .conflict)
        }
    }
}
