import Fluent
import Foundation
import InterludeCore
import Testing
import VaporTesting

@testable import InterludeServer

@Suite("Health record: events kept by the patient, read by their therapist")
struct RecordAPITests {
    typealias Event = Components.Schemas.HealthEvent

    static func event(
        _ app: TestContext, id: UUID = UUID(), title: String = "Loud concert", type: String = "tinnitusAttack"
    ) -> JSONValue {
        [
            "id": .string(id.uuidString), "title": .string(title),
            "occurredAt": QuestionnaireAPITests.iso(app.clock.now),
            "type": .string(type), "description": "Ringing for two days",
        ]
    }

    @Test("an event is created once under the app's id, sealed at rest, searchable, and refused with its fields named")
    func createOnce() async throws {
        try await withTestApp { app in
            // setup
            let (ada, adaID) = try await app.patient("ada@example.org")
            let (ben, _) = try await app.patient("ben@example.org")
            let id = UUID()

            // act
            let created = try await ada.send(.POST, "/me/events", json: Self.event(app, id: id))
            let repeated = try await ada.send(.POST, "/me/events", json: Self.event(app, id: id))
            let taken = try await ben.send(.POST, "/me/events", json: Self.event(app, id: id))
            let refused = try await ada.send(
                .POST, "/me/events",
                json: [
                    "id": .string(UUID().uuidString), "title": " ",
                    "occurredAt": QuestionnaireAPITests.iso(app.clock.now), "type": "sauna",
                ])
            _ = try await ada.send(
                .POST, "/me/events", json: Self.event(app, title: "Appointment with ENT", type: "appointment"))
            let found = try await ada.send(.GET, "/me/events?q=concert").decoded([Event].self)
            let appointments = try await ada.send(.GET, "/me/events?type=appointment").decoded([Event].self)
            let bens = try await ben.send(.GET, "/me/events").decoded([Event].self)

            // verify
            #expect(created.status == .created, "\(created.text)")
            #expect(try created.decoded(Event.self).version == 1)
            #expect(repeated.status == .ok)
            #expect(taken.status == .conflict && taken.body["type"].string == "/problems/record-id-taken")
            #expect(
                taken.body["detail"].string == "This id belongs to another record. Create the record under a new id.")
            #expect(Set(refused.body.problemFields) == ["title", "type"])
            #expect(found.map(\.title) == ["Loud concert"])
            #expect(appointments.map(\.title) == ["Appointment with ENT"])
            #expect(bens.isEmpty)
            let stored = try #require(
                try await EntryRecord.query(on: app.database).filter(\.$patient.$id == adaID).filter(\.$id == id)
                    .first())
            #expect(!stored.content.contains("Loud concert"), "sealed at rest")
            #expect(try await app.count("records") == 2)
        }
    }

    @Test(
        "an edit or delete based on an old version is a conflict and changes nothing; based on the current one it applies"
    )
    func versions() async throws {
        try await withTestApp { app in
            // setup
            let (ada, _) = try await app.patient("ada@example.org")
            let id = UUID()
            try #require(try await ada.send(.POST, "/me/events", json: Self.event(app, id: id)).status == .created)
            let change: JSONValue = [
                "baseVersion": 1, "title": "Concert, front row", "occurredAt": QuestionnaireAPITests.iso(app.clock.now),
                "type": "tinnitusAttack",
            ]

            // act: two devices edit the same version
            let first = try await ada.send(.PATCH, "/me/events/\(id)", json: change)
            let second = try await ada.send(
                .PATCH, "/me/events/\(id)", json: change.merging(["title": "Concert (other phone)"]))
            let staleDelete = try await ada.send(.DELETE, "/me/events/\(id)?baseVersion=1")
            let afterConflicts = try await ada.send(.GET, "/me/events").decoded([Event].self)
            let deleted = try await ada.send(.DELETE, "/me/events/\(id)?baseVersion=2")
            let gone = try await ada.send(.PATCH, "/me/events/\(id)", json: change.merging(["baseVersion": 2]))

            // verify
            #expect(first.status == .ok)
            #expect(try first.decoded(Event.self).version == 2)
            #expect(second.status == .conflict && second.body["type"].string == "/problems/record-changed")
            #expect(staleDelete.status == .conflict)
            #expect(afterConflicts.map(\.title) == ["Concert, front row"])
            #expect(deleted.status == .noContent)
            #expect(gone.status == .notFound)
            #expect(try await app.count("records") == 0)
        }
    }

    @Test("the therapist reads a paired patient's events, audited; another therapist finds nothing")
    func therapistReads() async throws {
        try await withTestApp { app in
            // setup
            let (therapist, _) = try await app.staff("therapist", "berger@praxis.example")
            let (stranger, _) = try await app.staff("therapist", "other@praxis.example")
            let (ada, adaID) = try await app.patient("ada@example.org")
            try await app.pair(ada, with: therapist)
            try #require(try await ada.send(.POST, "/me/events", json: Self.event(app)).status == .created)

            // act
            let read = try await therapist.send(.GET, "/patients/\(adaID.uuidString)/events")
            let refused = try await stranger.send(.GET, "/patients/\(adaID.uuidString)/events")

            // verify
            #expect(try read.decoded([Event].self).map(\.title) == ["Loud concert"])
            #expect(refused.status == .notFound)
            #expect(
                try await AuditEventRecord.query(on: app.database).filter(\.$action == AuditAction.recordsRead.rawValue)
                    .count() == 1)
        }
    }

    @Test("therapies: the end not before the start, ongoing ones first, the type one of the fourteen")
    func therapies() async throws {
        try await withTestApp { app in
            // setup
            let (ada, _) = try await app.patient("ada@example.org")
            func therapy(_ name: String, _ type: String, _ start: String, _ end: String? = nil) -> JSONValue {
                [
                    "id": .string(UUID().uuidString), "name": .string(name), "type": .string(type),
                    "startDate": .string(start), "endDate": JSONValue(end),
                ]
            }

            // act
            let ended = try await ada.send(
                .POST, "/me/therapies", json: therapy("Biofeedback", "biofeedback", "2025-09-01", "2025-12-01"))
            let ongoing = try await ada.send(
                .POST, "/me/therapies", json: therapy("Hearing aid", "hearingAid", "2026-01-10"))
            let backwards = try await ada.send(
                .POST, "/me/therapies", json: therapy("TRT", "retrainingTherapy", "2026-02-01", "2026-01-01"))
            let unknown = try await ada.send(.POST, "/me/therapies", json: therapy("Yoga", "yoga", "2026-02-31"))
            let listed = try await ada.send(.GET, "/me/therapies").decoded([Components.Schemas.Therapy].self)

            // verify
            #expect(ended.status == .created && ongoing.status == .created)
            #expect(backwards.body.problemCodes == ["endDate": "outOfRange"])
            #expect(unknown.body.problemCodes == ["type": "notAnOption", "startDate": "invalidFormat"])
            #expect(listed.map(\.name) == ["Hearing aid", "Biofeedback"])
            #expect(listed.map(\.ongoing) == [true, false])
            #expect(try await app.count("records") == 2)
        }
    }
}
