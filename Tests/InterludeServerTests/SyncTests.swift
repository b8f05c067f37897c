import Fluent
import Foundation
import InterludeCore
import Testing
import VaporTesting

@testable import InterludeServer

@Suite("Sync for apps: pull since a cursor, push changes made offline")
struct SyncTests {
    static func iso(_ date: Date) -> JSONValue { QuestionnaireAPITests.iso(date) }

    /// A slot on the five-minute grid `days` ahead at `hour` Vienna time.
    static func slot(_ app: TestContext, days: Int, hour: Int) -> (JSONValue, JSONValue) {
        let vienna = TimeZone(identifier: "Europe/Vienna")!
        let day = LocalDate(app.clock.now, in: vienna).adding(days: days)
        let start = LocalDateTime(date: day, time: LocalTime(hour: hour, minute: 0)!).instant(in: vienna)
        return (iso(start), iso(start.addingTimeInterval(50 * 60)))
    }

    static func appointment(_ app: TestContext, title: String, days: Int, hour: Int) -> JSONValue {
        let (start, end) = slot(app, days: days, hour: hour)
        return ["title": .string(title), "startsAt": start, "endsAt": end]
    }

    func pull(_ client: APIClient, since: String? = nil, etag: String? = nil) async throws -> APIClient.Reply {
        let path = since.map { "/sync?since=\($0)" } ?? "/sync"
        return try await client.send(.GET, path, headers: etag.map { ["If-None-Match": $0] } ?? [:])
    }

    @Test("a full pull, then only changes with tombstones, and 304 when nothing changed")
    func pulling() async throws {
        try await withTestApp { app in
            let (therapist, patient, patientID, promptID) = try await QuestionnaireAPITests().setUp(app, instrument: "who-5")
            _ = therapist
            let created = try await patient.send(.POST, "/me/appointments", json: Self.appointment(app, title: "Session", days: 2, hour: 10))
            let appointmentID = try #require(created.body["id"].string)

            let full = try await pull(patient)
            #expect(full.status == .ok)
            #expect(full.body["full"].bool == true)
            #expect(full.body["prompts"].array.map { $0["id"].string } == [promptID])
            #expect(full.body["instruments"][0]["key"].string == "who-5")
            #expect(full.body["appointments"][0]["title"].string == "Session")
            #expect(full.body["therapist"]["fullName"].string?.isEmpty == false)
            let cursor = try #require(full.body["cursor"].string)
            // The ETag is the quoted string HTTP defines, never URI-encoded; nothing of the answer may be cached.
            let tag = try #require(full.headers.first(name: "ETag"))
            #expect(tag.wholeMatch(of: /"[A-Za-z0-9_-]{27}"/) != nil, "\(tag)")
            #expect(full.headers.first(name: .cacheControl) == "no-store")

            // What changed just before the cursor comes once more; a minute later, nothing is new.
            app.clock.advance(by: 60)
            let overlap = try await pull(patient, since: cursor)
            #expect(overlap.body["full"].bool == false)
            #expect(overlap.body["prompts"].array.count == 1)
            let quiet = try await pull(patient, since: try #require(overlap.body["cursor"].string))
            #expect(quiet.body["prompts"].array.isEmpty && quiet.body["appointments"].array.isEmpty)
            let quietCursor = try #require(quiet.body["cursor"].string)
            let etag = try #require(quiet.headers.first(name: "ETag"))
            let unchanged = try await pull(patient, since: quietCursor, etag: etag)
            #expect(unchanged.status == .notModified)
            #expect(try await pull(patient, since: quietCursor, etag: "\"other\", \(etag)").status == .notModified)

            // An edit elsewhere and a deletion show up, the deletion as a tombstone.
            app.clock.advance(by: 60)
            let edited = try await patient.send(
                .PATCH, "/me/appointments/\(appointmentID)", json: Self.appointment(app, title: "Session moved", days: 3, hour: 11))
            #expect(edited.status == .ok)
            let afterEdit = try await pull(patient, since: quietCursor, etag: etag)
            #expect(afterEdit.status == .ok)
            #expect(afterEdit.body["appointments"][0]["version"].int == 2)
            app.clock.advance(by: 60)
            #expect(try await patient.send(.DELETE, "/me/appointments/\(appointmentID)").status == .noContent)
            let afterDelete = try await pull(patient, since: try #require(afterEdit.body["cursor"].string))
            #expect(afterDelete.body["deleted"].array.map { $0["id"].string } == [appointmentID])
            #expect(afterDelete.body["deleted"][0]["entity"].string == "appointment")

            // Answering changes the prompt for every device.
            app.clock.advance(by: 60)
            let answers: JSONValue = .object(Dictionary(uniqueKeysWithValues: (1...5).map { ("who5_\($0)", JSONValue.string("4")) }))
            let answered = try await patient.send(
                .POST, "/me/responses",
                json: ["id": .string(UUID().uuidString), "promptId": .string(promptID), "instrumentKey": "who-5", "version": 1,
                    "answers": answers, "completedAt": Self.iso(app.clock.now)])
            #expect(answered.status == .created)
            let afterAnswer = try await pull(patient, since: try #require(afterDelete.body["cursor"].string))
            #expect(afterAnswer.body["prompts"][0]["status"].string == "completed")
            _ = patientID

            // Staff and strangers have no sync of their own.
            #expect(try await pull(therapist).status == .forbidden)
        }
    }

    @Test("prompts the plans take back are tombstones for the apps")
    func plannedAway() async throws {
        try await withTestApp { app in
            let (therapist, patient, _, practiceID) = try await ScheduleAPITests().practice(app)
            let plan = try await therapist.send(.POST, "/studies/\(practiceID)/plans", json: ScheduleAPITests.daily)
            let first = try await pull(patient)
            let planned = first.body["prompts"].array.count
            #expect(planned > 30)
            app.clock.advance(by: 60)
            #expect(try await therapist.send(.DELETE, "/plans/\(plan.body["id"].string ?? "")").status == .noContent)
            let after = try await pull(patient, since: try #require(first.body["cursor"].string))
            #expect(after.body["deleted"].array.count >= planned - 3)
            #expect(after.body["deleted"].array.allSatisfy { $0["entity"].string == "prompt" })
        }
    }

    @Test("pushed changes apply once; a stale version is a conflict with the current state; bad ones are rejected")
    func pushing() async throws {
        try await withTestApp { app in
            let (_, patient, _, promptID) = try await QuestionnaireAPITests().setUp(app, instrument: "who-5")
            let create = UUID().uuidString.lowercased()
            let batch: JSONValue = ["mutations": [
                ["id": .string(create), "type": "appointment.create", "appointment": Self.appointment(app, title: "Offline", days: 1, hour: 9)],
            ]]
            let first = try await patient.send(.POST, "/sync", json: batch)
            #expect(first.status == .ok, "\(first.text)")
            #expect(first.body["results"][0]["status"].string == "applied")
            #expect(first.body["results"][0]["appointment"]["id"].string == create)
            let again = try await patient.send(.POST, "/sync", json: batch)
            #expect(again.body["results"][0]["replayed"].bool == true)
            #expect(try await app.count("appointments") == 1)

            // Two devices based their change on version 1; the second loses and is told what is there now.
            let update = { (title: String) -> JSONValue in
                ["id": .string(UUID().uuidString), "type": "appointment.update", "appointmentId": .string(create), "baseVersion": 1,
                    "appointment": Self.appointment(app, title: title, days: 1, hour: 10)]
            }
            let winner = try await patient.send(.POST, "/sync", json: ["mutations": [update("Phone")]])
            #expect(winner.body["results"][0]["status"].string == "applied")
            let loser = try await patient.send(.POST, "/sync", json: ["mutations": [update("Tablet")]])
            #expect(loser.body["results"][0]["status"].string == "conflict")
            #expect(loser.body["results"][0]["appointment"]["title"].string == "Phone")
            #expect(loser.body["results"][0]["appointment"]["version"].int == 2)

            // A semantic problem rejects that mutation only; a malformed batch changes nothing.
            let (start, _) = Self.slot(app, days: 1, hour: 12)
            let mixed = try await patient.send(
                .POST, "/sync",
                json: ["mutations": [
                    ["id": .string(UUID().uuidString), "type": "appointment.create",
                        "appointment": ["title": "Too short", "startsAt": start, "endsAt": start]],
                    ["id": .string(UUID().uuidString), "type": "appointment.delete", "appointmentId": .string(create), "baseVersion": 2],
                ]])
            #expect(mixed.body["results"][0]["status"].string == "rejected")
            #expect(mixed.body["results"][0]["problem"]["errors"][0]["field"].string == "endsAt")
            #expect(mixed.body["results"][1]["status"].string == "applied")
            #expect(try await app.count("appointments") == 0)
            let malformed = try await patient.send(
                .POST, "/sync", json: ["mutations": [["id": "not-a-uuid", "type": "appointment.delete"]]])
            #expect(malformed.status == .unprocessableEntity)
            #expect(Set(malformed.body.problemFields) == ["mutations.0.id"])

            // Answers given offline, sent twice.
            let answers: JSONValue = .object(Dictionary(uniqueKeysWithValues: (1...5).map { ("who5_\($0)", JSONValue.string("2")) }))
            let response: JSONValue = ["mutations": [[
                "id": .string(UUID().uuidString), "type": "response",
                "response": ["id": .string(UUID().uuidString), "promptId": .string(promptID), "instrumentKey": "who-5", "version": 1,
                    "answers": answers, "completedAt": Self.iso(app.clock.now)],
            ]]]
            #expect(try await patient.send(.POST, "/sync", json: response).body["results"][0]["status"].string == "applied")
            #expect(try await patient.send(.POST, "/sync", json: response).body["results"][0]["replayed"].bool == true)
            #expect(try await app.count("responses") == 1)

            // Another person cannot reuse a mutation's id to read its answer.
            let (other, _) = try await app.patient("other@example.org")
            let stolen = try await other.send(.POST, "/sync", json: batch)
            #expect(stolen.body["results"][0]["status"].string == "rejected")
            #expect(stolen.body["results"][0]["appointment"].isNull)
        }
    }

    @Test("interventions seen and completed offline go out with the batch; completing twice, or on two devices, is applied once")
    func interventionMutations() async throws {
        try await withTestApp { app in
            let (therapist, patient, patientID, _) = try await QuestionnaireAPITests().setUp(app, instrument: "who-5")
            let sent = try await therapist.send(
                .POST, "/patients/\(patientID.uuidString)/interventions", json: ["kind": "task", "text": "Walk."])
            let interventionID = try #require(sent.body["id"].string)
            let seen = UUID().uuidString
            let complete = UUID().uuidString
            let batch: JSONValue = ["mutations": [
                ["id": .string(seen), "type": "intervention.seen", "interventionId": .string(interventionID)],
                ["id": .string(complete), "type": "intervention.complete", "interventionId": .string(interventionID)],
            ]]
            let first = try await patient.send(.POST, "/sync", json: batch)
            #expect(first.body["results"].array.map { $0["status"].string } == ["applied", "applied"], "\(first.text)")
            #expect(first.body["results"][1]["intervention"]["state"].string == "completed")
            let completedAt = first.body["results"][1]["intervention"]["completedAt"].string
            app.clock.advance(by: 60)
            let otherDevice: JSONValue = ["mutations": [
                ["id": .string(UUID().uuidString), "type": "intervention.complete", "interventionId": .string(interventionID)],
            ]]
            let second = try await patient.send(.POST, "/sync", json: otherDevice)
            #expect(second.body["results"][0]["status"].string == "applied")
            #expect(second.body["results"][0]["intervention"]["completedAt"].string == completedAt)
            #expect(try await patient.send(.POST, "/sync", json: batch).body["results"][1]["replayed"].bool == true)

            // Someone else's intervention, or none named, is refused.
            let (other, _) = try await app.patient("other@example.org")
            let foreign = try await other.send(.POST, "/sync", json: ["mutations": [
                ["id": .string(UUID().uuidString), "type": "intervention.complete", "interventionId": .string(interventionID)],
            ]])
            #expect(foreign.body["results"][0]["status"].string == "rejected")
            let unnamed = try await patient.send(.POST, "/sync", json: ["mutations": [
                ["id": .string(UUID().uuidString), "type": "intervention.seen"],
            ]])
            #expect(unnamed.status == .unprocessableEntity)
            #expect(unnamed.body.problemFields == ["mutations.0.interventionId"])
        }
    }
}
