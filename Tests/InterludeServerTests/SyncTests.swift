import Fluent
import Foundation
import InterludeCore
import OpenAPIRuntime
import Testing
import VaporTesting

@testable import InterludeServer

@Suite("Sync for apps: pull since a cursor, push changes made offline")
struct SyncTests {
    typealias Changes = Components.Schemas.SyncChanges
    typealias Results = Components.Schemas.SyncResults

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

    static let who5: JSONValue = .object(
        Dictionary(uniqueKeysWithValues: (1...5).map { ("who5_\($0)", JSONValue.string("4")) }))

    func pull(_ client: APIClient, since: String? = nil, etag: String? = nil) async throws -> APIClient.Reply {
        let path = since.map { "/sync?since=\($0)" } ?? "/sync"
        return try await client.send(.GET, path, headers: etag.map { ["If-None-Match": $0] } ?? [:])
    }

    /// A paired patient with a WHO-5 open and an appointment in two days; answers the prompt's and appointment's ids.
    func patientWithData(_ app: TestContext) async throws -> (
        patient: APIClient, promptID: String, appointmentID: String
    ) {
        let (_, patient, _, promptID) = try await QuestionnaireAPITests().setUp(app, instrument: "who-5")
        let created = try await patient.send(
            .POST, "/me/appointments", json: Self.appointment(app, title: "Session", days: 2, hour: 10))
        return (patient, promptID, try created.decoded(Components.Schemas.Appointment.self).id)
    }

    func push(_ patient: APIClient, _ mutations: [JSONValue]) async throws -> Results {
        let reply = try await patient.send(.POST, "/sync", json: ["mutations": .array(mutations)])
        try #require(reply.status == .ok, "\(reply.text)")
        return try reply.decoded(Results.self)
    }

    // MARK: Pulling

    @Test("a first pull is full: prompts, their instruments, appointments and the therapist")
    func fullPull() async throws {
        try await withTestApp { app in
            // setup
            let (patient, promptID, _) = try await patientWithData(app)

            // act
            let full = try await pull(patient)

            // verify
            #expect(full.status == .ok)
            let changes = try full.decoded(Changes.self)
            #expect(changes.full)
            #expect(changes.prompts.map(\.id) == [promptID])
            #expect(full.body["instruments"].array.count == 1)
            #expect(try await app.storedDefinition("who-5") == full.body["instruments"][0].value as? NSDictionary)
            #expect(changes.appointments.map(\.title) == ["Session"])
            #expect(changes.therapist?.fullName.isEmpty == false)
        }
    }

    @Test("a pull's ETag is the quoted string HTTP defines, never URI-encoded, and nothing of the answer may be cached")
    func pullHeaders() async throws {
        try await withTestApp { app in
            // setup
            let (patient, _, _) = try await patientWithData(app)

            // act
            let full = try await pull(patient)

            // verify
            let tag = try #require(full.headers.first(name: "ETag"))
            #expect(tag.wholeMatch(of: /"[A-Za-z0-9_-]{27}"/) != nil, "\(tag)")
            #expect(full.headers.first(name: .cacheControl) == "no-store")
        }
    }

    @Test("a pull is written as the generated server's encoder writes it, and refused to a client that takes no JSON")
    func pullWriting() async throws {
        try await withTestApp { app in
            // setup
            let (patient, _, _) = try await patientWithData(app)
            let foundation = JSONEncoder()
            foundation.dateEncodingStrategy = .custom { date, encoder in
                var container = encoder.singleValueContainer()
                try container.encode(try APIDateTranscoder().encode(date))
            }

            // act
            let full = try await pull(patient)
            let html = try await patient.send(.GET, "/sync", headers: ["Accept": "text/html"])
            let json = try await patient.send(.GET, "/sync", headers: ["Accept": "text/html, application/json;q=0.5"])

            // verify
            #expect(full.headers.first(name: .contentType) == "application/json; charset=utf-8")
            #expect(full.headers.first(name: .contentLength) == String(full.data.count))
            let written = try JSONDecoder().decode(OpenAPIValueContainer.self, from: full.data)
            let again = try foundation.encode(try full.decoded(Changes.self))
            #expect(written == (try JSONDecoder().decode(OpenAPIValueContainer.self, from: again)))
            #expect(html.status == .notAcceptable)
            #expect(json.status == .ok)
        }
    }

    @Test("what changed just before the cursor comes once more; after that, nothing is new")
    func pullSinceCursor() async throws {
        try await withTestApp { app in
            // setup
            let (patient, _, _) = try await patientWithData(app)
            let cursor = try await pull(patient).decoded(Changes.self).cursor
            app.clock.advance(by: 60)

            // act
            let overlap = try await pull(patient, since: cursor).decoded(Changes.self)
            let quiet = try await pull(patient, since: overlap.cursor).decoded(Changes.self)

            // verify
            #expect(!overlap.full && overlap.prompts.count == 1)
            #expect(quiet.prompts.isEmpty && quiet.appointments.isEmpty && quiet.deleted.isEmpty)
        }
    }

    @Test("with nothing new, a pull with the last ETag is answered 304, also when it is one of several")
    func notModified() async throws {
        try await withTestApp { app in
            // setup
            let (patient, _, _) = try await patientWithData(app)
            let first = try await pull(patient).decoded(Changes.self)
            app.clock.advance(by: 60)
            let overlap = try await pull(patient, since: first.cursor).decoded(Changes.self)
            let quiet = try await pull(patient, since: overlap.cursor)
            let cursor = try quiet.decoded(Changes.self).cursor
            let etag = try #require(quiet.headers.first(name: "ETag"))

            // act
            let alone = try await pull(patient, since: cursor, etag: etag)
            let among = try await pull(patient, since: cursor, etag: "\"other\", \(etag)")

            // verify
            #expect(alone.status == .notModified)
            #expect(among.status == .notModified)
        }
    }

    @Test("an edit made elsewhere comes with the next pull, with its new version")
    func pullEdit() async throws {
        try await withTestApp { app in
            // setup
            let (patient, _, appointmentID) = try await patientWithData(app)
            let cursor = try await pull(patient).decoded(Changes.self).cursor
            app.clock.advance(by: 60)

            // act
            _ = try await patient.send(
                .PATCH, "/me/appointments/\(appointmentID)",
                json: Self.appointment(app, title: "Session moved", days: 3, hour: 11).merging(["baseVersion": 1]))
            let changes = try await pull(patient, since: cursor).decoded(Changes.self)

            // verify
            #expect(changes.appointments.map(\.version) == [2])
            #expect(changes.appointments.map(\.title) == ["Session moved"])
        }
    }

    @Test("a deletion comes with the next pull as a tombstone")
    func pullDeletion() async throws {
        try await withTestApp { app in
            // setup
            let (patient, _, appointmentID) = try await patientWithData(app)
            let cursor = try await pull(patient).decoded(Changes.self).cursor
            app.clock.advance(by: 60)

            // act
            _ = try await patient.send(.DELETE, "/me/appointments/\(appointmentID)")
            let changes = try await pull(patient, since: cursor).decoded(Changes.self)

            // verify
            #expect(changes.deleted.map(\.id) == [appointmentID])
            #expect(changes.deleted.map(\.entity) == [.appointment])
        }
    }

    @Test("answering a prompt changes it for every device, also one that synced long after the prompt was made")
    func pullAnswered() async throws {
        try await withTestApp { app in
            // setup
            let (patient, promptID, _) = try await patientWithData(app)
            app.clock.advance(by: 600)
            let cursor = try await pull(patient).decoded(Changes.self).cursor
            app.clock.advance(by: 60)

            // act
            _ = try await patient.send(
                .POST, "/me/responses",
                json: [
                    "id": .string(UUID().uuidString), "promptId": .string(promptID), "instrumentKey": "who-5",
                    "version": 1,
                    "answers": Self.who5, "completedAt": Self.iso(app.clock.now),
                ])
            let changes = try await pull(patient, since: cursor).decoded(Changes.self)

            // verify
            #expect(changes.prompts.map(\.status) == [.completed])
        }
    }

    @Test("prompts the plans take back are tombstones for the apps")
    func plannedAway() async throws {
        try await withTestApp { app in
            // setup
            let (therapist, patient, _, practiceID) = try await ScheduleAPITests().practice(app)
            let planID = try await ScheduleAPITests().createPlan(ScheduleAPITests.daily, by: therapist, in: practiceID)
            let first = try await pull(patient).decoded(Changes.self)
            app.clock.advance(by: 60)

            // act
            _ = try await therapist.send(.DELETE, "/plans/\(planID)")
            let after = try await pull(patient, since: first.cursor).decoded(Changes.self)

            // verify
            #expect(first.prompts.count > 30)
            #expect(after.deleted.count >= first.prompts.count - 3)
            #expect(after.deleted.allSatisfy { $0.entity == .prompt })
        }
    }

    @Test("staff have no sync of their own")
    func staffRefused() async throws {
        try await withTestApp { app in
            // setup
            let (therapist, _) = try await app.staff("therapist", "berger@praxis.example")

            // act
            let reply = try await pull(therapist)

            // verify
            #expect(reply.status == .forbidden)
        }
    }

    // MARK: Pushing

    func createAppointment(_ app: TestContext, id: String, title: String = "Offline") -> JSONValue {
        [
            "id": .string(id), "type": "appointment.create",
            "appointment": Self.appointment(app, title: title, days: 1, hour: 9),
        ]
    }

    @Test("a change made offline applies once; sent again, it is answered as replayed")
    func pushOnce() async throws {
        try await withTestApp { app in
            // setup
            let (_, patient, _, _) = try await QuestionnaireAPITests().setUp(app, instrument: "who-5")
            let id = UUID().uuidString.lowercased()

            // act
            let first = try await push(patient, [createAppointment(app, id: id)])
            let again = try await push(patient, [createAppointment(app, id: id)])

            // verify
            #expect(first.results.map(\.status) == [.applied])
            #expect(first.results.first?.appointment?.id == id)
            #expect(again.results.map(\.replayed) == [true])
            #expect(try await app.count("appointments") == 1)
        }
    }

    @Test("of two devices that changed version 1, the second is told of the conflict and what is there now")
    func pushConflict() async throws {
        try await withTestApp { app in
            // setup
            let (_, patient, _, _) = try await QuestionnaireAPITests().setUp(app, instrument: "who-5")
            let id = UUID().uuidString.lowercased()
            _ = try await push(patient, [createAppointment(app, id: id)])
            func update(_ title: String) -> JSONValue {
                [
                    "id": .string(UUID().uuidString), "type": "appointment.update", "appointmentId": .string(id),
                    "baseVersion": 1,
                    "appointment": Self.appointment(app, title: title, days: 1, hour: 10),
                ]
            }

            // act
            let phone = try await push(patient, [update("Phone")])
            let tablet = try await push(patient, [update("Tablet")])

            // verify
            #expect(phone.results.map(\.status) == [.applied])
            #expect(tablet.results.map(\.status) == [.conflict])
            #expect(tablet.results.first?.appointment?.title == "Phone")
            #expect(tablet.results.first?.appointment?.version == 2)
        }
    }

    @Test("a mutation with a problem is rejected on its own, naming the field; the rest of the batch applies")
    func pushRejectsOne() async throws {
        try await withTestApp { app in
            // setup
            let (_, patient, _, _) = try await QuestionnaireAPITests().setUp(app, instrument: "who-5")
            let id = UUID().uuidString.lowercased()
            _ = try await push(patient, [createAppointment(app, id: id)])
            let (start, _) = Self.slot(app, days: 1, hour: 12)

            // act
            let mixed = try await push(
                patient,
                [
                    [
                        "id": .string(UUID().uuidString), "type": "appointment.create",
                        "appointment": ["title": "Too short", "startsAt": start, "endsAt": start],
                    ],
                    [
                        "id": .string(UUID().uuidString), "type": "appointment.delete", "appointmentId": .string(id),
                        "baseVersion": 1,
                    ],
                ])

            // verify
            #expect(mixed.results.map(\.status) == [.rejected, .applied])
            #expect(mixed.results.first?.problem?.errors?.map(\.field) == ["endsAt"])
            #expect(try await app.count("appointments") == 0)
        }
    }

    static let malformedMutations: [(String, JSONValue, [String])] = [
        ("an id that is no UUID", ["id": "not-a-uuid", "type": "appointment.delete"], ["mutations.0.id"]),
        (
            "an intervention left unnamed", ["id": .string(UUID().uuidString), "type": "intervention.seen"],
            ["mutations.0.interventionId"]
        ),
    ]

    @Test(
        "a malformed batch is refused whole, naming the field, and changes nothing",
        arguments: malformedMutations)
    func malformedBatch(_ label: String, mutation: JSONValue, fields: [String]) async throws {
        try await withTestApp { app in
            // setup
            let (_, patient, _, _) = try await QuestionnaireAPITests().setUp(app, instrument: "who-5")
            let id = UUID().uuidString.lowercased()

            // act
            let reply = try await patient.send(
                .POST, "/sync", json: ["mutations": [mutation, createAppointment(app, id: id)]])

            // verify
            #expect(reply.status == .unprocessableEntity, "\(label)")
            #expect(reply.body.problemFields.sorted() == fields, "\(label): \(reply.text)")
            #expect(try await app.count("appointments") == 0)
        }
    }

    @Test("answers given offline and sent twice are stored once")
    func pushResponse() async throws {
        try await withTestApp { app in
            // setup
            let (_, patient, _, promptID) = try await QuestionnaireAPITests().setUp(app, instrument: "who-5")
            let response: JSONValue = [
                "id": .string(UUID().uuidString), "type": "response",
                "response": [
                    "id": .string(UUID().uuidString), "promptId": .string(promptID), "instrumentKey": "who-5",
                    "version": 1,
                    "answers": Self.who5, "completedAt": Self.iso(app.clock.now),
                ],
            ]

            // act
            let first = try await push(patient, [response])
            let again = try await push(patient, [response])

            // verify
            #expect(first.results.map(\.status) == [.applied])
            #expect(again.results.map(\.replayed) == [true])
            #expect(try await app.count("responses") == 1)
        }
    }

    @Test("another person cannot reuse a mutation's id to read what it made")
    func mutationIDsAreOwn() async throws {
        try await withTestApp { app in
            // setup
            let (_, patient, _, _) = try await QuestionnaireAPITests().setUp(app, instrument: "who-5")
            let id = UUID().uuidString.lowercased()
            _ = try await push(patient, [createAppointment(app, id: id, title: "Private")])
            let (other, _) = try await app.patient("other@example.org")

            // act
            let stolen = try await push(other, [createAppointment(app, id: id)])

            // verify
            #expect(stolen.results.map(\.status) == [.rejected])
            #expect(stolen.results.first?.appointment == nil)
            #expect(try await app.count("appointments") == 1)
        }
    }

    // MARK: Interventions offline

    /// A paired patient with a task sent to them; answers the task's id.
    func patientWithTask(_ app: TestContext) async throws -> (patient: APIClient, interventionID: String) {
        let (therapist, patient, patientID, _) = try await QuestionnaireAPITests().setUp(app, instrument: "who-5")
        let sent = try await therapist.send(
            .POST, "/patients/\(patientID.uuidString)/interventions", json: ["kind": "task", "text": "Walk."])
        return (patient, try sent.decoded(Components.Schemas.Intervention.self).id)
    }

    func mark(_ type: String, _ interventionID: String, id: String = UUID().uuidString) -> JSONValue {
        ["id": .string(id), "type": .string(type), "interventionId": .string(interventionID)]
    }

    @Test("an intervention seen and completed offline goes out with the batch")
    func interventionOffline() async throws {
        try await withTestApp { app in
            // setup
            let (patient, interventionID) = try await patientWithTask(app)

            // act
            let results = try await push(
                patient, [mark("intervention.seen", interventionID), mark("intervention.complete", interventionID)])

            // verify
            #expect(results.results.map(\.status) == [.applied, .applied])
            #expect(results.results.last?.intervention?.state == .completed)
        }
    }

    @Test(
        "completing on a second device applies and keeps the first completion's time; the same batch again is replayed")
    func interventionTwice() async throws {
        try await withTestApp { app in
            // setup
            let (patient, interventionID) = try await patientWithTask(app)
            let completion = mark("intervention.complete", interventionID)
            let first = try await push(patient, [completion])
            app.clock.advance(by: 60)

            // act
            let otherDevice = try await push(patient, [mark("intervention.complete", interventionID)])
            let replay = try await push(patient, [completion])

            // verify
            #expect(otherDevice.results.map(\.status) == [.applied])
            #expect(
                otherDevice.results.first?.intervention?.completedAt == first.results.first?.intervention?.completedAt)
            #expect(replay.results.map(\.replayed) == [true])
        }
    }

    @Test("someone else's intervention is rejected and stays as it was")
    func foreignIntervention() async throws {
        try await withTestApp { app in
            // setup
            let (_, interventionID) = try await patientWithTask(app)
            let (other, _) = try await app.patient("other@example.org")

            // act
            let foreign = try await push(other, [mark("intervention.complete", interventionID)])

            // verify
            #expect(foreign.results.map(\.status) == [.rejected])
            #expect(foreign.results.first?.intervention == nil)
            #expect(
                try await InterventionRecord.find(UUID(uuidString: interventionID), on: app.database)?.completedAt
                    == nil)
        }
    }
}
