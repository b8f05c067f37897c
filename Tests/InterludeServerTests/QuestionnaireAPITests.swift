import Fluent
import Foundation
import Testing
import VaporTesting

@testable import InterludeServer

@Suite("Questionnaires API")
struct QuestionnaireAPITests {
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
            json: ["instrumentKey": .string(instrument), "opensAt": Self.iso(app.clock.now),
                "closesAt": Self.iso(app.clock.now.addingTimeInterval(7 * 24 * 3600))])
        try #require(assigned.status == .created, "\(assigned.text)")
        return (therapist, patient, patientID, try #require(assigned.body["id"].string))
    }

    static func phqAnswers(_ values: [Int]) -> JSONValue {
        .object(Dictionary(uniqueKeysWithValues: values.enumerated().map { ("phq9_\($0.offset + 1)", JSONValue.string(String($0.element))) }))
    }

    func submission(_ promptID: String, id: UUID = UUID(), answers: JSONValue, completedAt: Date, version: Int = 1) -> JSONValue {
        [
            "id": .string(id.uuidString), "promptId": .string(promptID), "instrumentKey": "phq-9", "version": .int(version),
            "answers": answers, "startedAt": Self.iso(completedAt.addingTimeInterval(-120)), "completedAt": Self.iso(completedAt),
        ]
    }

    @Test("the library is installed and listed for staff; definitions export as FHIR")
    func library() async throws {
        try await withTestApp { app in
            let (researcher, _) = try await app.staff("researcher", "lab@uni.example")
            let list = try await researcher.send(.GET, "/instruments")
            #expect(list.status == .ok)
            let keys = Set(list.body.array.compactMap { $0["key"].string })
            #expect(keys == ["phq-9", "gad-7", "who-5", "pss-10", "intersession-daily", "isf-k", "tys-baseline", "tys-daily", "tys-weekly", "mood-vas"])
            #expect(list.body.array.allSatisfy { $0["status"].string == "published" })
            let json = try await researcher.send(.GET, "/instruments/phq-9/versions/1")
            #expect(json.body["sections"][0]["items"].array.count == 9)
            let fhir = try await researcher.send(.GET, "/instruments/phq-9/versions/1?format=fhir")
            #expect(fhir.body["resourceType"].string == "Questionnaire")
            #expect(fhir.body["url"].string == "https://interlude.test/fhir/Questionnaire/phq-9")
            #expect(try await researcher.send(.GET, "/instruments/phq-9/versions/9").status == .notFound)
            let (patient, _) = try await app.patient()
            #expect(try await patient.send(.GET, "/instruments").status == .forbidden)
            #expect(try await app.api.send(.GET, "/instruments").status == .unauthorized)
        }
    }

    @Test("a therapist assigns PHQ-9; the patient sees it open, fills it in and the server scores it once")
    func fillAndScore() async throws {
        try await withTestApp { app in
            let (therapist, patient, patientID, promptID) = try await setUp(app)
            let open = try await patient.send(.GET, "/me/prompts")
            #expect(open.body.array.count == 1)
            #expect(open.body[0]["title"].string == "Patient Health Questionnaire (PHQ-9)")
            #expect(open.body[0]["status"].string == "open")
            let detail = try await patient.send(.GET, "/me/prompts/\(promptID)")
            #expect(detail.body["definition"]["key"].string == "phq-9")
            #expect(detail.body["prompt"]["instrumentVersion"].int == 1)

            let id = UUID()
            app.clock.advance(by: 600)
            let body = submission(promptID, id: id, answers: Self.phqAnswers([3, 3, 3, 1, 0, 0, 0, 0, 1]), completedAt: app.clock.now)
            let first = try await patient.send(.POST, "/me/responses", json: body)
            #expect(first.status == .created, "\(first.text)")
            #expect(first.body["scores"][0]["value"].int == 11)
            #expect(first.body["scores"][0]["band"]["level"].string == "moderate")
            let retry = try await patient.send(.POST, "/me/responses", json: body)
            #expect(retry.status == .ok)
            #expect(retry.body["id"].string == first.body["id"].string)
            #expect(retry.body["receivedAt"].string == first.body["receivedAt"].string)
            #expect(try await app.count("responses") == 1)

            #expect(try await patient.send(.GET, "/me/prompts").body.array.isEmpty)
            let completed = try await patient.send(.GET, "/me/prompts?status=completed")
            #expect(completed.body[0]["status"].string == "completed")
            let second = try await patient.send(
                .POST, "/me/responses", json: submission(promptID, answers: Self.phqAnswers([0, 0, 0, 0, 0, 0, 0, 0, 0]), completedAt: app.clock.now))
            #expect(second.status == .conflict)
            #expect(second.body["type"].string == "/problems/prompt-completed")

            let history = try await patient.send(.GET, "/me/responses")
            #expect(history.body.array.count == 1)
            #expect(history.body[0]["scores"][0]["value"].int == 11)
            #expect(history.body[0]["answers"]["phq9_1"].string == "3")

            let seen = try await therapist.send(.GET, "/patients/\(patientID.uuidString)/responses")
            #expect(seen.body[0]["scores"][0]["value"].int == 11)
            #expect(seen.body[0]["startedAt"].isNull == false)
            #expect(try await app.count("audit_events WHERE action = 'responses.read'") == 1)

            let stored: String = try #require(try await app.sql.raw("SELECT answers FROM responses").first()?.decode(column: "answers", as: String.self))
            #expect(stored.hasPrefix("v1:"))
            #expect(!stored.contains("phq9_1"))
        }
    }

    @Test("invalid answers are refused per item and store nothing")
    func invalidAnswers() async throws {
        try await withTestApp { app in
            let (_, patient, _, promptID) = try await setUp(app)
            var answers: [String: JSONValue] = [:]
            for index in 1...9 { answers["phq9_\(index)"] = "0" }
            answers["phq9_2"] = "x"
            answers["phq9_3"] = .bool(true)
            answers["phq9_4"] = nil
            answers["phq9_difficulty"] = "1"
            answers["ghost"] = "1"
            answers["phq9_5"] = .array(["0"])
            let reply = try await patient.send(
                .POST, "/me/responses", json: submission(promptID, answers: .object(answers), completedAt: app.clock.now))
            #expect(reply.status == .unprocessableEntity)
            let codes = Dictionary(uniqueKeysWithValues: reply.body["errors"].array.map { ($0["field"].string ?? "", $0["code"].string ?? "") })
            #expect(codes["answers.phq9_2"] == "notAnOption")
            #expect(codes["answers.phq9_3"] == "wrongType")
            #expect(codes["answers.phq9_4"] == "required")
            #expect(codes["answers.phq9_5"] == "wrongType")
            #expect(codes["answers.phq9_difficulty"] == "notVisible")
            #expect(codes["answers.ghost"] == "unknown")
            let badObject = try await patient.send(
                .POST, "/me/responses",
                json: submission(promptID, answers: ["phq9_1": ["nested": "object"]], completedAt: app.clock.now))
            #expect(badObject.body.problemFields == ["answers.phq9_1"])
            let wrongVersion = try await patient.send(
                .POST, "/me/responses", json: submission(promptID, answers: Self.phqAnswers([0, 0, 0, 0, 0, 0, 0, 0, 0]), completedAt: app.clock.now, version: 2))
            #expect(wrongVersion.body.problemFields == ["version"])
            #expect(try await app.count("responses") == 0)
            #expect(try await patient.send(.GET, "/me/prompts").body.array.count == 1)
        }
    }

    @Test("completed before the deadline counts even when it arrives late; completed after it is refused")
    func deadline() async throws {
        try await withTestApp { app in
            let (_, patient, _, promptID) = try await setUp(app)
            let beforeDeadline = app.clock.now.addingTimeInterval(7 * 24 * 3600 - 60)
            app.clock.advance(by: 7 * 24 * 3600 + 3600)  // the phone was offline past the deadline
            #expect(try await patient.send(.GET, "/me/prompts").body.array.isEmpty)
            let late = try await patient.send(
                .POST, "/me/responses",
                json: submission(promptID, answers: Self.phqAnswers([1, 1, 1, 1, 1, 1, 1, 1, 0]), completedAt: app.clock.now))
            #expect(late.status == .unprocessableEntity)
            #expect(late.body["errors"][0]["code"].string == "afterDeadline")
            let future = try await patient.send(
                .POST, "/me/responses",
                json: submission(promptID, answers: Self.phqAnswers([0, 0, 0, 0, 0, 0, 0, 0, 0]), completedAt: app.clock.now.addingTimeInterval(3600)))
            #expect(future.status == .unprocessableEntity)
            #expect(future.body.problemFields == ["completedAt"])
            let offline = try await patient.send(
                .POST, "/me/responses",
                json: submission(promptID, answers: Self.phqAnswers([1, 1, 1, 1, 1, 1, 1, 1, 0]), completedAt: beforeDeadline))
            #expect(offline.status == .created, "\(offline.text)")
        }
    }

    @Test("prompts and responses belong to their patient and the patient's therapist only")
    func ownership() async throws {
        try await withTestApp { app in
            let (_, patient, patientID, promptID) = try await setUp(app)
            let (other, _) = try await app.patient("other@example.org")
            let (huber, _) = try await app.staff("therapist", "huber@praxis.example")
            #expect(try await other.send(.GET, "/me/prompts/\(promptID)").status == .notFound)
            let foreign = try await other.send(
                .POST, "/me/responses", json: submission(promptID, answers: Self.phqAnswers([0, 0, 0, 0, 0, 0, 0, 0, 0]), completedAt: app.clock.now))
            #expect(foreign.status == .unprocessableEntity)
            #expect(foreign.body.problemFields == ["promptId"])
            #expect(try await huber.send(.GET, "/patients/\(patientID.uuidString)/responses").status == .notFound)
            #expect(try await huber.send(.GET, "/patients/\(patientID.uuidString)/prompts").status == .notFound)
            let assign = try await huber.send(
                .POST, "/patients/\(patientID.uuidString)/prompts",
                json: ["instrumentKey": "gad-7", "opensAt": Self.iso(app.clock.now), "closesAt": Self.iso(app.clock.now.addingTimeInterval(3600))])
            #expect(assign.status == .notFound)

            let id = UUID()
            let created = try await patient.send(
                .POST, "/me/responses", json: submission(promptID, id: id, answers: Self.phqAnswers([0, 0, 0, 0, 0, 0, 0, 0, 0]), completedAt: app.clock.now))
            #expect(created.status == .created)
            #expect(try await other.send(.GET, "/responses/\(id.uuidString)").status == .notFound)
            #expect(try await huber.send(.GET, "/responses/\(id.uuidString)").status == .notFound)
            #expect(try await patient.send(.GET, "/responses/\(id.uuidString)").status == .ok)
            let reuse = try await other.send(
                .POST, "/me/responses", json: submission(promptID, id: id, answers: Self.phqAnswers([0, 0, 0, 0, 0, 0, 0, 0, 0]), completedAt: app.clock.now))
            #expect(reuse.status == .conflict)
        }
    }

    @Test("assignments with a bad window or an unknown instrument are refused")
    func refusedAssignments() async throws {
        try await withTestApp { app in
            let (therapist, _) = try await app.staff("therapist", "berger@praxis.example")
            let (patient, patientID) = try await app.patient()
            try await app.pair(patient, with: therapist)
            let path = "/patients/\(patientID.uuidString)/prompts"
            let backwards = try await therapist.send(
                .POST, path, json: ["instrumentKey": "phq-9", "opensAt": Self.iso(app.clock.now.addingTimeInterval(3600)), "closesAt": Self.iso(app.clock.now)])
            #expect(backwards.body.problemFields == ["closesAt"])
            let unknown = try await therapist.send(
                .POST, path, json: ["instrumentKey": "nope", "opensAt": Self.iso(app.clock.now), "closesAt": Self.iso(app.clock.now.addingTimeInterval(3600))])
            #expect(unknown.body.problemFields == ["instrumentKey"])
            let badDate = try await therapist.send(.POST, path, json: ["instrumentKey": "phq-9", "opensAt": "tomorrow", "closesAt": "later"])
            #expect(badDate.status == .unprocessableEntity, "\(badDate.text)")
            #expect(badDate.body["type"].string == "/problems/invalid-date-time")
            #expect(try await app.count("prompts") == 0)
            #expect(try await patient.send(.POST, path, json: ["instrumentKey": "phq-9", "opensAt": Self.iso(app.clock.now), "closesAt": Self.iso(app.clock.now.addingTimeInterval(3600))]).status == .forbidden)
        }
    }

    @Test("researchers import JSON, FHIR and REDCap as drafts, publish them, and new imports become new versions")
    func imports() async throws {
        try await withTestApp { app in
            let (researcher, _) = try await app.staff("researcher", "lab@uni.example")
            let (therapist, _) = try await app.staff("therapist", "berger@praxis.example")
            let study = try await StudyAPITests().createStudy(researcher, StudyAPITests.study("open"))
            let json = Self.sleep
            #expect(try await researcher.send(.POST, "/instruments", json: json).body.problemFields == ["studyId"])
            let imported = try await researcher.send(.POST, "/instruments?studyId=\(study)", json: json)
            #expect(imported.status == .created, "\(imported.text)")
            #expect(imported.body["status"].string == "draft")
            #expect(imported.body["version"].int == 1)
            #expect(imported.body["ownerStudyId"].string == study && imported.body["shared"].bool == false)
            #expect(try await therapist.send(.POST, "/instruments?studyId=\(study)", json: json).status == .notFound)
            let again = try await researcher.send(.POST, "/instruments?studyId=\(study)", json: json)
            #expect(again.body["version"].int == 1)
            let published = try await researcher.send(.POST, "/instruments/sleep/versions/1/publication")
            #expect(published.body["status"].string == "published")
            #expect(try await researcher.send(.POST, "/instruments/sleep/versions/1/publication").status == .conflict)
            let next = try await researcher.send(.POST, "/instruments?publish=true&studyId=\(study)", json: json)
            #expect(next.body["version"].int == 2)
            #expect(next.body["status"].string == "published")

            let fhir = try await researcher.send(.GET, "/instruments/who-5/versions/1?format=fhir")
            var questionnaire = try #require(try JSONSerialization.jsonObject(with: Data(fhir.text.utf8)) as? [String: Any])
            questionnaire["url"] = "https://elsewhere.example/fhir/Questionnaire/who-5-local"
            let fhirBody = String(decoding: try JSONSerialization.data(withJSONObject: questionnaire), as: UTF8.self)
            let fromFHIR = try await researcher.send(.POST, "/instruments?studyId=\(study)", raw: fhirBody)
            #expect(fromFHIR.status == .created, "\(fromFHIR.text)")
            #expect(fromFHIR.body["origin"].string == "fhir")
            #expect(fromFHIR.body["key"].string == "who-5-local")

            let csv = "Variable / Field Name,Form Name,Section Header,Field Type,Field Label,\"Choices, Calculations, OR Slider Labels\"\nmood,daily_mood,,radio,Mood?,\"1, bad | 2, good\"\n"
            let fromCSV = try await app.app.testing().sendRequest(
                .POST, "/api/v1/instruments?studyId=\(study)", headers: ["Authorization": "Bearer \(researcher.token!)", "Content-Type": "text/csv"],
                body: .init(string: csv))
            #expect(fromCSV.status == .created, "\(fromCSV.body.string)")
            #expect(fromCSV.body.string.contains("daily-mood"))
        }
    }

    static let sleep: JSONValue = [
        "key": "sleep", "title": ["en": "Sleep", "de": "Schlaf"],
        "sections": [["id": "s", "items": [["id": "hours", "type": "number", "text": "Hours slept", "min": 0, "max": 24, "required": true]]]],
    ]

    @Test("instruments are governed: the library is read-only, an import belongs to its study, a shared one needs an admin")
    func governance() async throws {
        try await withTestApp { app in
            let (researcher, _) = try await app.staff("researcher", "lab@uni.example")
            let (rival, _) = try await app.staff("researcher", "rival@uni.example")
            let (admin, _) = try await app.staff("admin", "admin@interlude.example")
            let study = try await StudyAPITests().createStudy(researcher, StudyAPITests.study("open"))
            let rivalStudy = try await StudyAPITests().createStudy(rival, StudyAPITests.study("open"))

            // The shipped PHQ-9 cannot be replaced by another version (here one whose crisis item asks nothing), by anyone.
            let phq9 = try await researcher.send(.GET, "/instruments/phq-9/versions/1")
            guard case .some(var definition) = phq9.body.value as? [String: Any],
                var sections = definition["sections"] as? [[String: Any]], var items = sections[0]["items"] as? [[String: Any]]
            else { Issue.record("no PHQ-9 definition"); return }
            for index in items.indices where items[index]["id"] as? String == "phq9_9" { items[index]["text"] = ["en": "Any comments?"] }
            sections[0]["items"] = items
            definition["sections"] = sections
            let altered = String(decoding: try JSONSerialization.data(withJSONObject: definition), as: UTF8.self)
            let before = try await app.count("instrument_versions")
            for client in [researcher, admin] {
                let replaced = try await client.send(.POST, "/instruments?publish=true&studyId=\(study)", raw: altered)
                #expect(replaced.status == .forbidden && replaced.body["type"].string == "/problems/built-in-instrument", "\(replaced.status) \(replaced.text.prefix(300))")
            }
            #expect(try await admin.send(.POST, "/instruments?publish=true", raw: altered).status == .forbidden)
            #expect(try await admin.send(.POST, "/instruments/phq-9/versions/1/sharing").status == .notFound)
            #expect(try await admin.send(.POST, "/instruments/phq-9/sharing").status == .forbidden)
            #expect(try await app.count("instrument_versions") == before)
            let stored = try await InstrumentCatalog(database: app.database, services: app.app.interlude).latestPublished("phq-9")
            #expect(try #require(stored).decodedDefinition().item("phq9_9") != nil)

            // An import belongs to its study: another study cannot take the key or publish it.
            let imported = try await researcher.send(.POST, "/instruments?studyId=\(study)", json: Self.sleep)
            #expect(imported.status == .created)
            let taken = try await rival.send(.POST, "/instruments?studyId=\(rivalStudy)", json: Self.sleep)
            #expect(taken.status == .conflict && taken.body["type"].string == "/problems/instrument-key-taken")
            #expect(try await rival.send(.POST, "/instruments?studyId=\(study)", json: Self.sleep).status == .notFound)
            #expect(try await rival.send(.POST, "/instruments/sleep/versions/1/publication").status == .notFound)
            #expect(try await rival.send(.POST, "/instruments/sleep/sharing").status == .notFound)
            #expect(try await researcher.send(.POST, "/instruments/sleep/versions/1/publication").status == .ok)

            // Shared, it reaches every study: the next version needs an administrator.
            let shared = try await researcher.send(.POST, "/instruments/sleep/sharing")
            #expect(shared.status == .ok && shared.body["shared"].bool == true)
            let draft = try await researcher.send(.POST, "/instruments?studyId=\(study)", json: Self.sleep)
            #expect(draft.body["version"].int == 2 && draft.body["shared"].bool == true)
            #expect(try await researcher.send(.POST, "/instruments/sleep/versions/2/publication").status == .forbidden)
            #expect(try await admin.send(.POST, "/instruments/sleep/versions/2/publication").status == .ok)

            let actions = try await AuditEventRecord.query(on: app.database).all().map(\.action).filter { $0.hasPrefix("instrument.") }
            #expect(actions.sorted() == [
                "instrument.imported", "instrument.imported", "instrument.published", "instrument.published", "instrument.shared",
            ])
        }
    }

    @Test("broken imports are refused naming the place, and nothing is stored")
    func brokenImports() async throws {
        try await withTestApp { app in
            let (researcher, _) = try await app.staff("researcher", "lab@uni.example")
            let study = try await StudyAPITests().createStudy(researcher, StudyAPITests.study("open"))
            let before = try await app.count("instrument_versions")
            let cyclic: JSONValue = [
                "key": "broken", "title": "Broken",
                "sections": [["id": "s", "items": [
                    ["id": "a", "type": "boolean", "text": "A", "visibleWhen": ["clauses": [["item": "b", "operator": "answered"]]]],
                    ["id": "b", "type": "boolean", "text": "B", "visibleWhen": ["clauses": [["item": "a", "operator": "answered"]]]],
                    ["id": "a", "type": "boolean", "text": "Again"],
                ]]],
            ]
            let reply = try await researcher.send(.POST, "/instruments?studyId=\(study)", json: cyclic)
            #expect(reply.status == .unprocessableEntity)
            #expect(reply.body.problemFields == ["sections.0.items.2.id"])
            let loop: JSONValue = [
                "key": "broken", "title": "Broken",
                "sections": [["id": "s", "items": [
                    ["id": "a", "type": "boolean", "text": "A", "visibleWhen": ["clauses": [["item": "b", "operator": "answered"]]]],
                    ["id": "b", "type": "boolean", "text": "B", "visibleWhen": ["clauses": [["item": "a", "operator": "answered"]]]],
                ]]],
            ]
            let loopReply = try await researcher.send(.POST, "/instruments?studyId=\(study)", json: loop)
            #expect(loopReply.body.problemFields == ["sections.0.items.0.visibleWhen", "sections.0.items.1.visibleWhen"])
            let unknownType: JSONValue = [
                "key": "broken", "title": "Broken", "sections": [["id": "s", "items": [["id": "a", "type": "video", "text": "A"]]]],
            ]
            let typeReply = try await researcher.send(.POST, "/instruments?studyId=\(study)", json: unknownType)
            #expect(typeReply.status == .unprocessableEntity)
            #expect(typeReply.body.problemFields == ["sections.0.items.0.type"])
            #expect(try await app.count("instrument_versions") == before)
        }
    }
}
