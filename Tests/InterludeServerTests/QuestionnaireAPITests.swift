import Fluent
import Foundation
import InterludeCore
import OpenAPIRuntime
import Testing
import VaporTesting

@testable import InterludeServer

@Suite("Questionnaires API")
struct QuestionnaireAPITests {
    @Test("answers are read from and written to JSON as their Codable form reads and writes them")
    func answerJSON() throws {
        let sent =
            #"{"a": true, "b": false, "c": 0, "d": 3, "e": -2, "f": 2.5, "g": 1e20, "h": "text", "i": "", "j": ["x", "y"], "k": [], "l": [1], "m": ["x", 1], "n": null, "o": {"p": 1}, "q": 0.1}"#
        let object = try JSONDecoder().decode(OpenAPIObjectContainer.self, from: Data(sent.utf8))
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        for (item, value) in object.value {
            let roundTrip = try? JSONDecoder().decode(
                AnswerValue.self, from: encoder.encode(OpenAPIValueContainer(unvalidatedValue: value)))
            #expect(AnswerValue(json: value) == roundTrip, "\(item)")
        }
        let answers: Answers = [
            "a": .bool(true), "b": .number(4), "c": .number(-1.25), "d": .number(1e16), "h": .number(1e20),
            "i": .number(-0.5), "e": .text("x"), "f": .list(["p", "q"]),
            "g": .list([]),
        ]
        let direct = try encoder.encode(try OpenAPIObjectContainer(unvalidatedValue: answers.mapValues(\.json)))
        let viaJSON = try encoder.encode(
            try JSONDecoder().decode(OpenAPIObjectContainer.self, from: encoder.encode(answers)))
        #expect(String(decoding: direct, as: UTF8.self) == String(decoding: viaJSON, as: UTF8.self))
    }

    static func iso(_ date: Date) -> JSONValue { .string(ISO8601DateFormatter().string(from: date)) }

    /// A therapist with a paired patient, and a PHQ-9 prompt open for a week.
    func setUp(_ app: TestContext, instrument: String = "phq-9") async throws
        -> (therapist: APIClient, patient: APIClient, patientID: UUID, promptID: String)
    {
        let (therapist, _) = try await app.staff("therapist", "berger@praxis.example")
        let (patient, patientID) = try await app.patient()
        try await app.pair(patient, with: therapist)
        let assigned = try await therapist.send(
            .POST, "/patients/\(patientID.uuidString)/prompts",
            json: [
                "instrumentKey": .string(instrument), "opensAt": Self.iso(app.clock.now),
                "closesAt": Self.iso(app.clock.now.addingTimeInterval(7 * 24 * 3600)),
            ])
        try #require(assigned.status == .created, "\(assigned.text)")
        return (therapist, patient, patientID, try assigned.decoded(Components.Schemas.Prompt.self).id)
    }

    static func phqAnswers(_ values: [Int]) -> JSONValue {
        .object(
            Dictionary(
                uniqueKeysWithValues: values.enumerated().map {
                    ("phq9_\($0.offset + 1)", JSONValue.string(String($0.element)))
                }))
    }

    static let noSymptoms = phqAnswers([0, 0, 0, 0, 0, 0, 0, 0, 0])
    /// Scores 11, "moderate".
    static let moderate = phqAnswers([3, 3, 3, 1, 0, 0, 0, 0, 1])

    func submission(_ promptID: String, id: UUID = UUID(), answers: JSONValue, completedAt: Date, version: Int = 1)
        -> JSONValue
    {
        [
            "id": .string(id.uuidString), "promptId": .string(promptID), "instrumentKey": "phq-9",
            "version": .int(version),
            "answers": answers, "startedAt": Self.iso(completedAt.addingTimeInterval(-120)),
            "completedAt": Self.iso(completedAt),
        ]
    }

    // MARK: The library

    @Test("the shipped library is listed for staff, every instrument published")
    func library() async throws {
        try await withTestApp { app in
            // setup
            let (researcher, _) = try await app.staff("researcher", "lab@uni.example")

            // act
            let list = try await researcher.send(.GET, "/instruments").decoded(
                [Components.Schemas.InstrumentSummary].self)

            // verify
            #expect(
                Set(list.map(\.key)) == [
                    "phq-9", "gad-7", "who-5", "pss-10", "intersession-daily", "isf-k", "tys-baseline", "tys-daily",
                    "tys-weekly", "tys-monthly", "mood-vas",
                    "tschq", "worst-symptom", "mini-tq",
                ])
            #expect(list.allSatisfy { $0.status == .published && $0.origin == .library })
        }
    }

    @Test("a version's definition reads as Interlude's JSON and as a FHIR Questionnaire")
    func definitionFormats() async throws {
        try await withTestApp { app in
            // setup
            let (researcher, _) = try await app.staff("researcher", "lab@uni.example")

            // act
            let json = try await researcher.send(.GET, "/instruments/phq-9/versions/1")
            let fhir = try await researcher.send(.GET, "/instruments/phq-9/versions/1?format=fhir")

            // verify
            #expect(json.body["sections"][0]["items"].array.count == 9)
            #expect(fhir.body["resourceType"].string == "Questionnaire")
            #expect(fhir.body["url"].string == "https://interlude.test/fhir/Questionnaire/phq-9")
        }
    }

    @Test(
        "the library is refused to patients and to callers without a session; an unknown version is not found",
        arguments: [
            ("a patient lists", "patient", "/instruments", HTTPStatus.forbidden),
            ("nobody signed in lists", "anonymous", "/instruments", .unauthorized),
            ("a researcher reads version 9", "researcher", "/instruments/phq-9/versions/9", .notFound),
        ])
    func libraryRefused(_ label: String, caller: String, path: String, status: HTTPStatus) async throws {
        try await withTestApp { app in
            // setup
            let client: APIClient
            switch caller {
            case "patient": client = try await app.patient().client
            case "researcher": client = try await app.staff("researcher", "lab@uni.example").0
            default: client = app.api
            }

            // act
            let reply = try await client.send(.GET, path)

            // verify
            #expect(reply.status == status, "\(label): \(reply.text)")
        }
    }

    // MARK: Answering

    @Test("an assigned prompt is open for the patient, titled, with the definition of its version")
    func assignedPromptOpen() async throws {
        try await withTestApp { app in
            // setup
            let (_, patient, _, promptID) = try await setUp(app)

            // act
            let open = try await patient.send(.GET, "/me/prompts").decoded([Components.Schemas.Prompt].self)
            let detail = try await patient.send(.GET, "/me/prompts/\(promptID)")

            // verify
            #expect(open.map(\.title) == ["Patient Health Questionnaire (PHQ-9)"])
            #expect(open.map(\.status) == [.open])
            let prompt = try detail.decoded(Components.Schemas.PromptWithDefinition.self).prompt
            #expect(prompt.instrumentVersion == 1)
            #expect(try await app.storedDefinition("phq-9") == detail.body["definition"].value as? NSDictionary)
            #expect(detail.body["definition"]["key"].string == "phq-9")
        }
    }

    @Test("the server scores a submitted PHQ-9 and names its band")
    func scored() async throws {
        try await withTestApp { app in
            // setup
            let (_, patient, _, promptID) = try await setUp(app)
            app.clock.advance(by: 600)

            // act
            let reply = try await patient.send(
                .POST, "/me/responses", json: submission(promptID, answers: Self.moderate, completedAt: app.clock.now))

            // verify
            #expect(reply.status == .created, "\(reply.text)")
            let result = try reply.decoded(Components.Schemas.ResponseResult.self)
            #expect(result.scores.first?.value == 11)
            #expect(result.scores.first?.band?.level == "moderate")
        }
    }

    @Test("sending the same response again answers the stored one and stores nothing new")
    func resent() async throws {
        try await withTestApp { app in
            // setup
            let (_, patient, _, promptID) = try await setUp(app)
            let body = submission(promptID, answers: Self.moderate, completedAt: app.clock.now)
            let first = try await patient.send(.POST, "/me/responses", json: body).decoded(
                Components.Schemas.ResponseResult.self)
            app.clock.advance(by: 60)

            // act
            let retry = try await patient.send(.POST, "/me/responses", json: body)

            // verify
            #expect(retry.status == .ok)
            let again = try retry.decoded(Components.Schemas.ResponseResult.self)
            #expect(again.id == first.id)
            #expect(again.receivedAt == first.receivedAt)
            #expect(try await app.count("responses") == 1)
        }
    }

    @Test("a response id another person's response holds is refused, and both stay as they were")
    func responseIDTaken() async throws {
        try await withTestApp { app in
            // setup
            let (therapist, first, _, firstPrompt) = try await setUp(app)
            let id = UUID()
            let stored = try await first.send(
                .POST, "/me/responses",
                json: submission(firstPrompt, id: id, answers: Self.moderate, completedAt: app.clock.now))
            try #require(stored.status == .created)
            let (second, secondID) = try await app.patient("second@example.org")
            try await app.pair(second, with: therapist)
            let assigned = try await therapist.send(
                .POST, "/patients/\(secondID.uuidString)/prompts",
                json: [
                    "instrumentKey": "phq-9", "opensAt": Self.iso(app.clock.now),
                    "closesAt": Self.iso(app.clock.now.addingTimeInterval(7 * 24 * 3600)),
                ])
            let secondPrompt = try assigned.decoded(Components.Schemas.Prompt.self).id

            // act
            let taken = try await second.send(
                .POST, "/me/responses",
                json: submission(secondPrompt, id: id, answers: Self.noSymptoms, completedAt: app.clock.now))

            // verify
            #expect(taken.status == .conflict)
            #expect(taken.body["type"].string == "/problems/response-id-taken")
            #expect(try await app.count("responses") == 1)
            #expect(
                try await second.send(.GET, "/me/prompts").decoded([Components.Schemas.Prompt].self).map(\.id) == [
                    secondPrompt
                ])
            let kept = try await first.send(.GET, "/me/responses").decoded([Components.Schemas.ResponseResult].self)
            #expect(kept.map(\.id) == [id.uuidString.lowercased()])
        }
    }

    @Test("a completed prompt leaves the open list, and a second response to it is refused")
    func completedPrompt() async throws {
        try await withTestApp { app in
            // setup
            let (_, patient, _, promptID) = try await setUp(app)
            _ = try await patient.send(
                .POST, "/me/responses", json: submission(promptID, answers: Self.moderate, completedAt: app.clock.now))

            // act
            let second = try await patient.send(
                .POST, "/me/responses", json: submission(promptID, answers: Self.noSymptoms, completedAt: app.clock.now)
            )

            // verify
            #expect(second.status == .conflict)
            #expect(second.body["type"].string == "/problems/prompt-completed")
            #expect(try await patient.send(.GET, "/me/prompts").decoded([Components.Schemas.Prompt].self).isEmpty)
            let completed = try await patient.send(.GET, "/me/prompts?status=completed").decoded(
                [Components.Schemas.Prompt].self)
            #expect(completed.map(\.status) == [.completed])
            #expect(try await app.count("responses") == 1)
        }
    }

    @Test("the patient's history shows their answers with the scores")
    func history() async throws {
        try await withTestApp { app in
            // setup
            let (_, patient, _, promptID) = try await setUp(app)
            _ = try await patient.send(
                .POST, "/me/responses", json: submission(promptID, answers: Self.moderate, completedAt: app.clock.now))

            // act
            let history = try await patient.send(.GET, "/me/responses")

            // verify
            #expect(
                try history.decoded([Components.Schemas.ResponseResult].self).map { $0.scores.first?.value } == [11])
            #expect(history.body[0]["answers"]["phq9_1"].string == "3")
        }
    }

    @Test("the therapist reads the response with its scores and timing, and the read is audited")
    func therapistReads() async throws {
        try await withTestApp { app in
            // setup
            let (therapist, patient, patientID, promptID) = try await setUp(app)
            _ = try await patient.send(
                .POST, "/me/responses", json: submission(promptID, answers: Self.moderate, completedAt: app.clock.now))

            // act
            let seen = try await therapist.send(.GET, "/patients/\(patientID.uuidString)/responses")

            // verify
            let responses = try seen.decoded([Components.Schemas.ResponseResult].self)
            #expect(responses.map { $0.scores.first?.value } == [11])
            #expect(responses.first?.startedAt != nil)
            #expect(try await app.count("audit_events WHERE action = 'responses.read'") == 1)
        }
    }

    @Test("answers are stored sealed, never as readable item ids")
    func answersSealed() async throws {
        try await withTestApp { app in
            // setup / act
            let (_, patient, _, promptID) = try await setUp(app)
            _ = try await patient.send(
                .POST, "/me/responses", json: submission(promptID, answers: Self.moderate, completedAt: app.clock.now))

            // verify
            let stored: String = try #require(
                try await app.sql.raw("SELECT answers FROM responses").first()?.decode(
                    column: "answers", as: String.self))
            #expect(stored.hasPrefix("v1:"))
            #expect(!stored.contains("phq9_1"))
        }
    }

    static let invalidAnswerCases: [(String, [String: JSONValue], Int, String, String)] = [
        ("a word for a choice", ["phq9_2": "x"], 1, "answers.phq9_2", "notAnOption"),
        ("yes/no for a choice", ["phq9_3": true], 1, "answers.phq9_3", "wrongType"),
        ("a required item left out", ["phq9_4": nil], 1, "answers.phq9_4", "required"),
        ("a list for one choice", ["phq9_5": ["0"]], 1, "answers.phq9_5", "wrongType"),
        ("an object for one choice", ["phq9_1": ["nested": "object"]], 1, "answers.phq9_1", "wrongType"),
        ("an item its condition hides", ["phq9_difficulty": "1"], 1, "answers.phq9_difficulty", "notVisible"),
        ("an item the instrument lacks", ["ghost": "1"], 1, "answers.ghost", "unknown"),
        ("a version the prompt is not for", [:], 2, "version", "mismatch"),
    ]

    @Test(
        "invalid answers are refused per item, naming the item and why, and nothing is stored",
        arguments: invalidAnswerCases)
    func invalidAnswers(_ label: String, changes: [String: JSONValue], version: Int, field: String, code: String)
        async throws
    {
        try await withTestApp { app in
            // setup
            let (_, patient, _, promptID) = try await setUp(app)
            let answers = Self.noSymptoms.merging(changes)

            // act
            let reply = try await patient.send(
                .POST, "/me/responses",
                json: submission(promptID, answers: answers, completedAt: app.clock.now, version: version))

            // verify
            #expect(reply.status == .unprocessableEntity, "\(label)")
            #expect(reply.body.problemCodes == [field: code], "\(label): \(reply.text)")
            #expect(try await app.count("responses") == 0)
            #expect(try await patient.send(.GET, "/me/prompts").body.array.count == 1)
        }
    }

    static func itemTimes(_ times: [String: Int]) -> [String: JSONValue] {
        ["itemTimesMs": .object(times.mapValues { .int($0) })]
    }

    @Test("the time spent per item is kept with the response, and its quality indices are worked out from it")
    func itemTimesKept() async throws {
        try await withTestApp { app in
            // setup
            let (_, patient, _, promptID) = try await setUp(app)
            let times = Dictionary(uniqueKeysWithValues: (1...9).map { ("phq9_\($0)", $0 <= 5 ? 400 : 2500) })

            // act
            let reply = try await patient.send(
                .POST, "/me/responses",
                json: submission(promptID, answers: Self.moderate, completedAt: app.clock.now)
                    .merging(Self.itemTimes(times)))

            // verify
            #expect(reply.status == .created, "\(reply.text)")
            let stored = try #require(try await ResponseRecord.query(on: app.database).first())
            let seconds = try JSONDecoder().decode([String: Double].self, from: Data((stored.itemTimes ?? "").utf8))
            #expect(seconds == times.mapValues { Double($0) / 1000 })
            let quality = try #require(ResponseService.quality(of: stored))
            #expect(quality.timedItems == 9 && quality.fastShare == 5.0 / 9 && quality.medianSeconds == 0.4)
            #expect(quality.flags == [.fast] && quality.longstring == 4 && quality.scaleItems == 9, "\(quality)")
        }
    }

    static let refusedItemTimes: [(String, [String: Int], String, String)] = [
        ("an item the instrument lacks", ["ghost": 1200], "itemTimesMs.ghost", "unknown"),
        ("a negative time", ["phq9_1": -5], "itemTimesMs.phq9_1", "outOfRange"),
        ("more than a day", ["phq9_2": 86_400_001], "itemTimesMs.phq9_2", "outOfRange"),
    ]

    @Test("item times that cannot be are refused, naming the item, and nothing is stored", arguments: refusedItemTimes)
    func itemTimesRefused(_ label: String, times: [String: Int], field: String, code: String) async throws {
        try await withTestApp { app in
            // setup
            let (_, patient, _, promptID) = try await setUp(app)

            // act
            let reply = try await patient.send(
                .POST, "/me/responses",
                json: submission(promptID, answers: Self.moderate, completedAt: app.clock.now)
                    .merging(Self.itemTimes(times)))

            // verify
            #expect(reply.status == .unprocessableEntity, "\(label)")
            #expect(reply.body.problemCodes == [field: code], "\(label): \(reply.text)")
            #expect(try await app.count("responses") == 0)
        }
    }

    @Test("a response completed before the deadline counts even when the phone sends it after")
    func completedOffline() async throws {
        try await withTestApp { app in
            // setup: the phone was offline past the deadline
            let (_, patient, _, promptID) = try await setUp(app)
            let beforeDeadline = app.clock.now.addingTimeInterval(7 * 24 * 3600 - 60)
            app.clock.advance(by: 7 * 24 * 3600 + 3600)

            // act
            let reply = try await patient.send(
                .POST, "/me/responses", json: submission(promptID, answers: Self.moderate, completedAt: beforeDeadline))

            // verify
            #expect(reply.status == .created, "\(reply.text)")
            #expect(try await patient.send(.GET, "/me/prompts").body.array.isEmpty)
        }
    }

    @Test(
        "a response completed after the deadline, or in the future, is refused",
        arguments: [("after the deadline", 0.0, "afterDeadline"), ("an hour ahead", 3600, "invalidValue")])
    func completedOutsideWindow(_ label: String, ahead: Double, code: String) async throws {
        try await withTestApp { app in
            // setup: the deadline has passed
            let (_, patient, _, promptID) = try await setUp(app)
            app.clock.advance(by: 7 * 24 * 3600 + 3600)

            // act
            let reply = try await patient.send(
                .POST, "/me/responses",
                json: submission(promptID, answers: Self.moderate, completedAt: app.clock.now.addingTimeInterval(ahead))
            )

            // verify
            #expect(reply.status == .unprocessableEntity, "\(label)")
            #expect(reply.body.problemCodes == ["completedAt": code], "\(label): \(reply.text)")
            #expect(try await app.count("responses") == 0)
        }
    }

    // MARK: Whose prompts and responses

    /// What another patient and another therapist try with a patient's prompt and response.
    enum Intrusion: String, CaseIterable, Sendable {
        case otherPatientReadsPrompt, otherPatientAnswersPrompt, otherPatientReusesResponseID, otherPatientReadsResponse
        case otherTherapistReadsResponse, otherTherapistListsResponses, otherTherapistListsPrompts,
            otherTherapistAssigns

        var status: HTTPStatus {
            switch self {
            // Someone else's prompt is unknown to them before anything about its response is said.
            case .otherPatientAnswersPrompt, .otherPatientReusesResponseID: .unprocessableEntity
            default: .notFound
            }
        }
    }

    @Test(
        "prompts and responses belong to their patient and the patient's therapist only", arguments: Intrusion.allCases)
    func intrusions(_ intrusion: Intrusion) async throws {
        try await withTestApp { app in
            // setup: the patient answered their prompt
            let (_, patient, patientID, promptID) = try await setUp(app)
            let responseID = UUID()
            let created = try await patient.send(
                .POST, "/me/responses",
                json: submission(promptID, id: responseID, answers: Self.moderate, completedAt: app.clock.now))
            try #require(created.status == .created)
            let (other, _) = try await app.patient("other@example.org")
            let (huber, _) = try await app.staff("therapist", "huber@praxis.example")
            let patientPath = "/patients/\(patientID.uuidString)"

            // act
            let reply: APIClient.Reply
            switch intrusion {
            case .otherPatientReadsPrompt: reply = try await other.send(.GET, "/me/prompts/\(promptID)")
            case .otherPatientAnswersPrompt:
                reply = try await other.send(
                    .POST, "/me/responses",
                    json: submission(promptID, answers: Self.noSymptoms, completedAt: app.clock.now))
            case .otherPatientReusesResponseID:
                reply = try await other.send(
                    .POST, "/me/responses",
                    json: submission(promptID, id: responseID, answers: Self.noSymptoms, completedAt: app.clock.now))
            case .otherPatientReadsResponse: reply = try await other.send(.GET, "/responses/\(responseID.uuidString)")
            case .otherTherapistReadsResponse: reply = try await huber.send(.GET, "/responses/\(responseID.uuidString)")
            case .otherTherapistListsResponses: reply = try await huber.send(.GET, "\(patientPath)/responses")
            case .otherTherapistListsPrompts: reply = try await huber.send(.GET, "\(patientPath)/prompts")
            case .otherTherapistAssigns:
                reply = try await huber.send(
                    .POST, "\(patientPath)/prompts",
                    json: [
                        "instrumentKey": "gad-7", "opensAt": Self.iso(app.clock.now),
                        "closesAt": Self.iso(app.clock.now.addingTimeInterval(3600)),
                    ])
            }

            // verify
            #expect(reply.status == intrusion.status, "\(reply.text)")
            #expect(!reply.text.contains("phq9_1") && !reply.text.contains("PHQ-9"))
            #expect(try await app.count("responses") == 1)
            #expect(try await app.count("prompts") == 1)
        }
    }

    @Test("the patient reads their own response by its id")
    func ownResponse() async throws {
        try await withTestApp { app in
            // setup
            let (_, patient, _, promptID) = try await setUp(app)
            let responseID = UUID()
            _ = try await patient.send(
                .POST, "/me/responses",
                json: submission(promptID, id: responseID, answers: Self.moderate, completedAt: app.clock.now))

            // act
            let reply = try await patient.send(.GET, "/responses/\(responseID.uuidString)")

            // verify
            #expect(reply.status == .ok)
            #expect(
                try reply.decoded(Components.Schemas.ResponseResult.self).id.lowercased()
                    == responseID.uuidString.lowercased())
        }
    }

    enum RefusedAssignment: String, CaseIterable, Sendable {
        case closesBeforeItOpens, unknownInstrument, datesInWords, byThePatient
    }

    @Test(
        "assignments with a bad window, an unknown instrument or dates in words are refused, and patients cannot assign",
        arguments: RefusedAssignment.allCases)
    func refusedAssignments(_ refused: RefusedAssignment) async throws {
        try await withTestApp { app in
            // setup
            let (therapist, _) = try await app.staff("therapist", "berger@praxis.example")
            let (patient, patientID) = try await app.patient()
            try await app.pair(patient, with: therapist)
            let now = app.clock.now
            let hourly: JSONValue = [
                "instrumentKey": "phq-9", "opensAt": Self.iso(now), "closesAt": Self.iso(now.addingTimeInterval(3600)),
            ]
            let (caller, body): (APIClient, JSONValue) =
                switch refused {
                case .closesBeforeItOpens:
                    (
                        therapist,
                        hourly.merging(["opensAt": Self.iso(now.addingTimeInterval(3600)), "closesAt": Self.iso(now)])
                    )
                case .unknownInstrument: (therapist, hourly.merging(["instrumentKey": "nope"]))
                case .datesInWords: (therapist, hourly.merging(["opensAt": "tomorrow", "closesAt": "later"]))
                case .byThePatient: (patient, hourly)
                }

            // act
            let reply = try await caller.send(.POST, "/patients/\(patientID.uuidString)/prompts", json: body)

            // verify
            switch refused {
            case .closesBeforeItOpens: #expect(reply.body.problemFields == ["closesAt"], "\(reply.text)")
            case .unknownInstrument: #expect(reply.body.problemFields == ["instrumentKey"], "\(reply.text)")
            case .datesInWords: #expect(reply.body["type"].string == "/problems/invalid-date-time", "\(reply.text)")
            case .byThePatient: #expect(reply.status == .forbidden, "\(reply.text)")
            }
            #expect(reply.status == (refused == .byThePatient ? .forbidden : .unprocessableEntity))
            #expect(try await app.count("prompts") == 0)
        }
    }

    // MARK: Importing instruments

    static let sleep: JSONValue = [
        "key": "sleep", "title": ["en": "Sleep", "de": "Schlaf"],
        "sections": [
            [
                "id": "s",
                "items": [
                    ["id": "hours", "type": "number", "text": "Hours slept", "min": 0, "max": 24, "required": true]
                ],
            ]
        ],
    ]

    /// A researcher with a study of their own, and the study's id.
    func researcherWithStudy(_ app: TestContext, _ email: String = "lab@uni.example") async throws -> (
        client: APIClient, studyID: String
    ) {
        let (researcher, _) = try await app.staff("researcher", email)
        return (researcher, try await StudyAPITests().createStudy(researcher, StudyAPITests.study("open")))
    }

    func importSleep(_ researcher: APIClient, into studyID: String, publish: Bool = false) async throws
        -> Components.Schemas.InstrumentSummary
    {
        let reply = try await researcher.send(
            .POST, "/instruments?studyId=\(studyID)\(publish ? "&publish=true" : "")", json: Self.sleep)
        try #require([.created, .ok].contains(reply.status), "\(reply.text)")
        return try reply.decoded(Components.Schemas.InstrumentSummary.self)
    }

    @Test("a researcher's import is a draft, version 1, of their study, not shared")
    func importDraft() async throws {
        try await withTestApp { app in
            // setup
            let (researcher, studyID) = try await researcherWithStudy(app)

            // act
            let reply = try await researcher.send(.POST, "/instruments?studyId=\(studyID)", json: Self.sleep)

            // verify
            #expect(reply.status == .created, "\(reply.text)")
            let imported = try reply.decoded(Components.Schemas.InstrumentSummary.self)
            #expect(imported.status == .draft && imported.version == 1 && imported.origin == .json)
            #expect(imported.ownerStudyId == studyID && imported.shared == false)
        }
    }

    @Test(
        "an import is refused without a study, and to a therapist outside the study",
        arguments: [
            ("no study named", false, HTTPStatus.unprocessableEntity),
            ("a therapist of no part in it", true, .notFound),
        ])
    func importRefused(_ label: String, byTherapist: Bool, status: HTTPStatus) async throws {
        try await withTestApp { app in
            // setup
            let (_, studyID) = try await researcherWithStudy(app)
            let caller =
                byTherapist
                ? try await app.staff("therapist", "berger@praxis.example").0 : try await app.signIn("lab@uni.example")
            let before = try await app.count("instrument_versions")

            // act
            let reply = try await caller.send(
                .POST, byTherapist ? "/instruments?studyId=\(studyID)" : "/instruments", json: Self.sleep)

            // verify
            #expect(reply.status == status, "\(label): \(reply.text)")
            if !byTherapist { #expect(reply.body.problemFields == ["studyId"]) }
            #expect(try await app.count("instrument_versions") == before)
        }
    }

    @Test("importing the same draft again replaces it and stays version 1")
    func importAgain() async throws {
        try await withTestApp { app in
            // setup
            let (researcher, studyID) = try await researcherWithStudy(app)
            _ = try await importSleep(researcher, into: studyID)

            // act
            let again = try await importSleep(researcher, into: studyID)

            // verify
            #expect(again.version == 1 && again.status == .draft)
        }
    }

    @Test("a draft's definition is read afresh each time; a published one is read once by the process")
    func definitionsRead() async throws {
        try await withTestApp { app in
            // setup
            let (researcher, studyID) = try await researcherWithStudy(app)
            _ = try await importSleep(researcher, into: studyID)
            let catalog = InstrumentCatalog(database: app.database, services: app.app.interlude)
            let sleep = InstrumentVersionKey(key: "sleep", version: 1)
            let renamed: JSONValue = [
                "key": "sleep", "title": ["en": "Rest"],
                "sections": [
                    [
                        "id": "s",
                        "items": [["id": "hours", "type": "number", "text": "Hours slept", "min": 0, "max": 24]],
                    ]
                ],
            ]

            // act: the draft replaced, then published, then its stored row changed behind the process's back
            let draft = try await catalog.definition("sleep", 1)?.title.text(.en)
            _ = try await researcher.send(.POST, "/instruments?studyId=\(studyID)", json: renamed)
            let replaced = try await catalog.definition("sleep", 1)?.title.text(.en)
            _ = try await researcher.send(.POST, "/instruments/sleep/versions/1/publication")
            let published = try await catalog.definitions([sleep])[sleep]
            try await app.sql.raw("UPDATE instrument_versions SET definition = '{}' WHERE key = 'sleep'").run()
            let again = try await catalog.definitions([sleep])[sleep]

            // verify
            #expect(draft == "Sleep" && replaced == "Rest")
            #expect(published?.title.text(.en) == "Rest" && again == published)
            #expect(try await catalog.definitions([InstrumentVersionKey(key: "sleep", version: 2)]).isEmpty)
        }
    }

    @Test("publishing makes a draft available once; publishing it again is a conflict")
    func publish() async throws {
        try await withTestApp { app in
            // setup
            let (researcher, studyID) = try await researcherWithStudy(app)
            _ = try await importSleep(researcher, into: studyID)

            // act
            let published = try await researcher.send(.POST, "/instruments/sleep/versions/1/publication")
            let twice = try await researcher.send(.POST, "/instruments/sleep/versions/1/publication")

            // verify
            #expect(try published.decoded(Components.Schemas.InstrumentSummary.self).status == .published)
            #expect(twice.status == .conflict)
        }
    }

    @Test("an import after publication is a new version, published at once when asked")
    func importNewVersion() async throws {
        try await withTestApp { app in
            // setup
            let (researcher, studyID) = try await researcherWithStudy(app)
            _ = try await importSleep(researcher, into: studyID)
            _ = try await researcher.send(.POST, "/instruments/sleep/versions/1/publication")

            // act
            let next = try await importSleep(researcher, into: studyID, publish: true)

            // verify
            #expect(next.version == 2 && next.status == .published)
        }
    }

    @Test("a FHIR Questionnaire imports with the key its URL names")
    func importFHIR() async throws {
        try await withTestApp { app in
            // setup: the WHO-5 as FHIR, under another address
            let (researcher, studyID) = try await researcherWithStudy(app)
            let fhir = try await researcher.send(.GET, "/instruments/who-5/versions/1?format=fhir")
            var questionnaire = try #require(
                try JSONSerialization.jsonObject(with: Data(fhir.text.utf8)) as? [String: Any])
            questionnaire["url"] = "https://elsewhere.example/fhir/Questionnaire/who-5-local"
            let body = String(decoding: try JSONSerialization.data(withJSONObject: questionnaire), as: UTF8.self)

            // act
            let reply = try await researcher.send(.POST, "/instruments?studyId=\(studyID)", raw: body)

            // verify
            #expect(reply.status == .created, "\(reply.text)")
            let imported = try reply.decoded(Components.Schemas.InstrumentSummary.self)
            #expect(imported.origin == .fhir && imported.key == "who-5-local")
        }
    }

    @Test("a REDCap data dictionary imports from CSV, one instrument per form")
    func importREDCap() async throws {
        try await withTestApp { app in
            // setup
            let (researcher, studyID) = try await researcherWithStudy(app)
            let csv =
                "Variable / Field Name,Form Name,Section Header,Field Type,Field Label,\"Choices, Calculations, OR Slider Labels\"\nmood,daily_mood,,radio,Mood?,\"1, bad | 2, good\"\n"

            // act
            let reply = try await app.app.testing().sendRequest(
                .POST, "/api/v1/instruments?studyId=\(studyID)",
                headers: ["Authorization": "Bearer \(researcher.token!)", "Content-Type": "text/csv"],
                body: .init(string: csv))

            // verify
            #expect(reply.status == .created, "\(reply.body.string)")
            let imported = JSON(data: Data(reply.body.string.utf8))
            #expect(imported["key"].string == "daily-mood" && imported["origin"].string == "redcap")
            #expect(imported["imported"].array.count == 1 && imported["notes"].array.isEmpty)
        }
    }

    static let twoForms = #"""
        Variable / Field Name,Form Name,Section Header,Field Type,Field Label,"Choices, Calculations, OR Slider Labels",Field Note,Text Validation Type OR Show Slider Number,Text Validation Min,Text Validation Max,Identifier?,Branching Logic (Show field only if...),Required Field?,Custom Alignment,Question Number (surveys only),Matrix Group Name,Matrix Ranking?,Field Annotation
        record_id,screening,,text,Record ID,,,,,,,,,,,,,
        smoker,screening,,yesno,Do you smoke?,,,,,,,,,,,,,
        per_day,screening,,text,Cigarettes a day,,,integer,1,100,,[smoker] = '1',,,,,,
        e1,epds,,radio,I have been able to laugh,"0, As much as I always could | 1, Not quite so much | 2, Definitely not so much | 3, Not at all",,,,,,,,,,,,
        e2,epds,,radio,I have looked forward with enjoyment,"0, As much as I ever did | 1, Rather less | 2, Definitely less | 3, Hardly at all",,,,,,,,,,,,
        epds_total,epds,,calc,EPDS total,"sum([e1],[e2])",,,,,,,,,,,,
        """#

    @Test(
        "a dictionary of two forms becomes two instruments, all or those chosen, under the file's keys or one of the importer's own; what is not asked is listed"
    )
    func importREDCapForms() async throws {
        try await withTestApp { app in
            // setup
            let (researcher, studyID) = try await researcherWithStudy(app)
            let (rival, rivalStudy) = try await researcherWithStudy(app, "rival@uni.example")
            func upload(_ client: APIClient, _ study: String, _ query: String = "") async throws -> (HTTPStatus, JSON) {
                let reply = try await app.app.testing().sendRequest(
                    .POST, "/api/v1/instruments?studyId=\(study)\(query)",
                    headers: [
                        "Authorization": "Bearer \(client.token!)", "Content-Type": "text/csv", "Accept-Language": "de",
                    ],
                    body: .init(string: Self.twoForms))
                return (reply.status, JSON(data: Data(reply.body.string.utf8)))
            }

            // act
            let (status, body) = try await upload(researcher, studyID, "&publish=true")
            let (takenStatus, taken) = try await upload(rival, rivalStudy, "&forms=epds")
            let (ownStatus, own) = try await upload(rival, rivalStudy, "&forms=epds&key=rival")
            let (unknownStatus, unknown) = try await upload(rival, rivalStudy, "&forms=diary")
            let (badKeyStatus, badKey) = try await upload(rival, rivalStudy, "&key=Not%20a%20key")

            // verify
            #expect(status == .created, "\(body)")
            #expect(body["imported"].array.map { $0["key"].string } == ["screening", "epds"])
            #expect(body["imported"].array.map { $0["status"].string } == ["published", "published"])
            let notes = body["notes"].array
            #expect(notes.map { $0["kind"].string } == ["recordID", "calculationAsScore"])
            #expect(notes.first?["place"].string == #"row 2 (field "record_id")"#)
            #expect(notes.last?["message"].string?.contains("Score") == true, "in the request's language")
            let epds = try await researcher.send(.GET, "/instruments/epds/versions/1")
            #expect(epds.body["scores"][0]["items"].array.count == 2)
            #expect(takenStatus == .conflict)
            #expect(taken["detail"].string?.contains("key") == true)
            #expect(ownStatus == .created, "\(own)")
            #expect(own["key"].string == "rival" && own["imported"].array.count == 1)
            #expect(unknownStatus == .unprocessableEntity && unknown.problemFields == ["forms"])
            #expect(unknown["errors"][0]["detail"].string?.contains("diary") == true)
            #expect(badKeyStatus == .unprocessableEntity && badKey.problemFields == ["key"])
        }
    }

    @Test(
        "whether the uploader may import for the study is asked before the file is read: a stranger's broken file is 403, an owner's 422"
    )
    func importPermissionFirst() async throws {
        try await withTestApp { app in
            // setup: a dictionary whose branching logic once took minutes to split
            let (researcher, studyID) = try await researcherWithStudy(app)
            let (stranger, _) = try await app.staff("researcher", "stranger@uni.example")
            let logic = "[mood] = '1'" + String(repeating: " ", count: 32_000) + "x"
            let csv =
                "Variable / Field Name,Form Name,Section Header,Field Type,Field Label,\"Choices, Calculations, OR Slider Labels\",Field Note,Text Validation Type OR Show Slider Number,Text Validation Min,Text Validation Max,Identifier?,Branching Logic (Show field only if...)\nmood,daily_mood,,radio,Mood?,\"1, bad | 2, good\",,,,,,\nagain,daily_mood,,yesno,Again?,,,,,,,\(logic)\n"
            func upload(_ client: APIClient) async throws -> TestingHTTPResponse {
                try await app.app.testing().sendRequest(
                    .POST, "/api/v1/instruments?studyId=\(studyID)",
                    headers: ["Authorization": "Bearer \(client.token!)", "Content-Type": "text/csv"],
                    body: .init(string: csv))
            }

            let before = try await app.count("instrument_versions")

            // act
            let refused = try await upload(stranger)
            let read = try await upload(researcher)

            // verify
            #expect(refused.status == .forbidden || refused.status == .notFound, "\(refused.body.string)")
            #expect(!refused.body.string.contains("row "), "the file was not read")
            #expect(read.status == .unprocessableEntity)
            #expect(
                JSON(data: Data(read.body.string.utf8)).problemFields == [#"row 3 (field "again")"#],
                "longer than a cell may be")
            #expect(try await app.count("instrument_versions") == before)
        }
    }

    static let brokenImportCases: [(String, [JSONValue], [String])] = [
        (
            "an item id used twice",
            [
                ["id": "a", "type": "boolean", "text": "A"], ["id": "b", "type": "boolean", "text": "B"],
                ["id": "a", "type": "boolean", "text": "Again"],
            ], ["sections.0.items.2.id"]
        ),
        (
            "conditions that wait for each other",
            [
                [
                    "id": "a", "type": "boolean", "text": "A",
                    "visibleWhen": ["clauses": [["item": "b", "operator": "answered"]]],
                ],
                [
                    "id": "b", "type": "boolean", "text": "B",
                    "visibleWhen": ["clauses": [["item": "a", "operator": "answered"]]],
                ],
            ], ["sections.0.items.0.visibleWhen", "sections.0.items.1.visibleWhen"]
        ),
        ("an item type nobody knows", [["id": "a", "type": "video", "text": "A"]], ["sections.0.items.0.type"]),
    ]

    @Test(
        "broken imports are refused naming the place, and nothing is stored",
        arguments: brokenImportCases)
    func brokenImports(_ label: String, items: [JSONValue], fields: [String]) async throws {
        try await withTestApp { app in
            // setup
            let (researcher, studyID) = try await researcherWithStudy(app)
            let before = try await app.count("instrument_versions")
            let definition: JSONValue = [
                "key": "broken", "title": "Broken", "sections": [["id": "s", "items": .array(items)]],
            ]

            // act
            let reply = try await researcher.send(.POST, "/instruments?studyId=\(studyID)", json: definition)

            // verify
            #expect(reply.status == .unprocessableEntity, "\(label)")
            #expect(reply.body.problemFields == fields, "\(label): \(reply.text)")
            #expect(try await app.count("instrument_versions") == before)
        }
    }

    // MARK: Governance

    /// The shipped PHQ-9 with its crisis item asking nothing.
    func alteredPHQ9(_ researcher: APIClient) async throws -> String {
        let phq9 = try await researcher.send(.GET, "/instruments/phq-9/versions/1")
        var definition = try #require(phq9.body.value as? [String: Any])
        var sections = try #require(definition["sections"] as? [[String: Any]])
        var items = try #require(sections[0]["items"] as? [[String: Any]])
        for index in items.indices where items[index]["id"] as? String == "phq9_9" {
            items[index]["text"] = ["en": "Any comments?"]
        }
        sections[0]["items"] = items
        definition["sections"] = sections
        return String(decoding: try JSONSerialization.data(withJSONObject: definition), as: UTF8.self)
    }

    enum LibraryChange: String, CaseIterable, Sendable {
        case researcherImportsForStudy, adminImportsForStudy, adminImportsForInstallation, adminSharesVersion,
            adminSharesInstrument
    }

    @Test(
        "the shipped library cannot be replaced or re-shared, by a researcher or an administrator",
        arguments: LibraryChange.allCases)
    func libraryReadOnly(_ change: LibraryChange) async throws {
        try await withTestApp { app in
            // setup
            let (researcher, studyID) = try await researcherWithStudy(app)
            let (admin, _) = try await app.staff("admin", "admin@interlude.example")
            let altered = try await alteredPHQ9(researcher)
            let before = try await app.count("instrument_versions")

            // act
            let reply: APIClient.Reply
            switch change {
            case .researcherImportsForStudy:
                reply = try await researcher.send(.POST, "/instruments?publish=true&studyId=\(studyID)", raw: altered)
            case .adminImportsForStudy:
                reply = try await admin.send(.POST, "/instruments?publish=true&studyId=\(studyID)", raw: altered)
            case .adminImportsForInstallation:
                reply = try await admin.send(.POST, "/instruments?publish=true", raw: altered)
            case .adminSharesVersion: reply = try await admin.send(.POST, "/instruments/phq-9/versions/1/sharing")
            case .adminSharesInstrument: reply = try await admin.send(.POST, "/instruments/phq-9/sharing")
            }

            // verify
            #expect(
                reply.status == (change == .adminSharesVersion ? .notFound : .forbidden), "\(reply.text.prefix(300))")
            if change != .adminSharesVersion { #expect(reply.body["type"].string == "/problems/built-in-instrument") }
            #expect(try await app.count("instrument_versions") == before)
            let stored = try await InstrumentCatalog(database: app.database, services: app.app.interlude)
                .latestPublished("phq-9")
            #expect(try #require(stored).decodedDefinition().item("phq9_9")?.text.text(.en).contains("dead") == true)
        }
    }

    enum RivalMove: String, CaseIterable, Sendable {
        case takesTheKey, importsIntoTheStudy, publishes, shares
    }

    @Test(
        "an import belongs to its study: a researcher of another study cannot take, change, publish or share it",
        arguments: RivalMove.allCases)
    func importBelongsToStudy(_ move: RivalMove) async throws {
        try await withTestApp { app in
            // setup
            let (researcher, studyID) = try await researcherWithStudy(app)
            let (rival, rivalStudyID) = try await researcherWithStudy(app, "rival@uni.example")
            _ = try await importSleep(researcher, into: studyID)
            let before = try await app.count("instrument_versions")

            // act
            let reply: APIClient.Reply
            switch move {
            case .takesTheKey:
                reply = try await rival.send(.POST, "/instruments?studyId=\(rivalStudyID)", json: Self.sleep)
            case .importsIntoTheStudy:
                reply = try await rival.send(.POST, "/instruments?studyId=\(studyID)", json: Self.sleep)
            case .publishes: reply = try await rival.send(.POST, "/instruments/sleep/versions/1/publication")
            case .shares: reply = try await rival.send(.POST, "/instruments/sleep/sharing")
            }

            // verify
            if move == .takesTheKey {
                #expect(
                    reply.status == .conflict && reply.body["type"].string == "/problems/instrument-key-taken",
                    "\(reply.text)")
            } else {
                #expect(reply.status == .notFound, "\(reply.text)")
            }
            #expect(try await app.count("instrument_versions") == before)
            let versions = try await researcher.send(.GET, "/instruments").decoded(
                [Components.Schemas.InstrumentSummary].self)
            let sleep = try #require(versions.first { $0.key == "sleep" })
            #expect(sleep.status == .draft && sleep.shared == false)
        }
    }

    @Test("once shared, an instrument reaches every study, so only an administrator publishes its next version")
    func sharedNeedsAdmin() async throws {
        try await withTestApp { app in
            // setup: a published import, shared, with a second draft
            let (researcher, studyID) = try await researcherWithStudy(app)
            let (admin, _) = try await app.staff("admin", "admin@interlude.example")
            _ = try await importSleep(researcher, into: studyID)
            _ = try await researcher.send(.POST, "/instruments/sleep/versions/1/publication")
            let shared = try await researcher.send(.POST, "/instruments/sleep/sharing")
            let draft = try await importSleep(researcher, into: studyID)

            // act
            let byResearcher = try await researcher.send(.POST, "/instruments/sleep/versions/2/publication")
            let byAdmin = try await admin.send(.POST, "/instruments/sleep/versions/2/publication")

            // verify
            #expect(try shared.decoded(Components.Schemas.InstrumentSummary.self).shared == true)
            #expect(draft.version == 2 && draft.shared == true)
            #expect(byResearcher.status == .forbidden)
            #expect(byAdmin.status == .ok)
        }
    }

    @Test("imports, publications and sharing are audited, one event each")
    func governanceAudited() async throws {
        try await withTestApp { app in
            // setup / act
            let (researcher, studyID) = try await researcherWithStudy(app)
            _ = try await importSleep(researcher, into: studyID)
            _ = try await researcher.send(.POST, "/instruments/sleep/versions/1/publication")
            _ = try await researcher.send(.POST, "/instruments/sleep/sharing")

            // verify
            let actions = try await AuditEventRecord.query(on: app.database).all().map(\.action).filter {
                $0.hasPrefix("instrument.")
            }
            #expect(actions.sorted() == ["instrument.imported", "instrument.published", "instrument.shared"])
        }
    }
}
