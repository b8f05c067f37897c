import Fluent
import Foundation
import InterludeCore
import Testing
import VaporTesting

@testable import InterludeServer

@Suite("Health record in sync: records made offline, edited on two devices, deleted, with tombstones")
struct RecordSyncTests {
    typealias Changes = Components.Schemas.SyncChanges

    static func event(_ app: TestContext, title: String) -> JSONValue {
        ["title": .string(title), "occurredAt": QuestionnaireAPITests.iso(app.clock.now), "type": "tinnitusAttack"]
    }

    @Test("records of every kind made offline arrive once, and a pull brings them to the other device")
    func createOffline() async throws {
        try await withTestApp { app in
            // setup
            let (phone, _) = try await app.patient("ada@example.org")
            let (eventID, therapyID, audiogramID, mutation) = (UUID(), UUID(), UUID(), UUID())
            let batch: [JSONValue] = [
                [
                    "id": .string(mutation.uuidString), "type": "record.create", "recordKind": "event",
                    "recordId": .string(eventID.uuidString),
                    "record": Self.event(app, title: "Loud concert"),
                ],
                [
                    "id": .string(therapyID.uuidString), "type": "record.create", "recordKind": "therapy",
                    "record": ["name": "Hearing aid", "type": "hearingAid", "startDate": "2026-02-01"],
                ],
                [
                    "id": .string(UUID().uuidString), "type": "record.create", "recordKind": "audiogram",
                    "recordId": .string(audiogramID.uuidString),
                    "record": [
                        "measuredAt": QuestionnaireAPITests.iso(app.clock.now),
                        "points": [["ear": "right", "frequencyHz": 1000, "thresholdDbHL": 30]],
                    ],
                ],
                [
                    "id": .string(UUID().uuidString), "type": "record.create", "recordKind": "therapy",
                    "record": [
                        "name": "Backwards", "type": "hearingAid", "startDate": "2026-02-01", "endDate": "2026-01-01",
                    ],
                ],
            ]

            // act
            let first = try await SyncTests().push(phone, batch)
            let again = try await SyncTests().push(phone, Array(batch.prefix(1)))
            let pulled = try await SyncTests().pull(phone).decoded(Changes.self)

            // verify
            #expect(first.results.map(\.status) == [.applied, .applied, .applied, .rejected])
            #expect(first.results[0].record?.value["title"] as? String == "Loud concert")
            #expect(first.results[0].recordKind == .event)
            #expect(first.results[3].problem?.errors?.map(\.field) == ["record.endDate"])
            #expect(again.results[0].replayed && again.results[0].status == .applied)
            #expect(Set(pulled.records.map(\.kind)) == [.event, .therapy, .audiogram])
            #expect(pulled.records.count == 3)
            let therapy = try #require(pulled.records.first { $0.kind == .therapy })
            #expect(
                therapy.record.value["id"] as? String == therapyID.uuidString.lowercased(),
                "a create without recordId takes the mutation's id")
            #expect(try await app.count("records") == 3)
        }
    }

    @Test(
        "two devices edit the same version: the first applies, the second is a conflict answered with the record as it is now"
    )
    func editOnTwoDevices() async throws {
        try await withTestApp { app in
            // setup
            let (phone, _) = try await app.patient("ada@example.org")
            let id = UUID()
            _ = try await SyncTests().push(
                phone,
                [
                    [
                        "id": .string(id.uuidString), "type": "record.create", "recordKind": "event",
                        "record": Self.event(app, title: "Concert"),
                    ]
                ])
            let cursor = try await SyncTests().pull(phone).decoded(Changes.self).cursor
            app.clock.advance(by: 60)
            func edit(_ title: String) -> JSONValue {
                [
                    "id": .string(UUID().uuidString), "type": "record.update", "recordKind": "event",
                    "recordId": .string(id.uuidString),
                    "baseVersion": 1, "record": Self.event(app, title: title),
                ]
            }

            // act
            let phoneEdit = try await SyncTests().push(phone, [edit("Concert, front row")])
            let tabletEdit = try await SyncTests().push(phone, [edit("Concert (tablet)")])
            let changes = try await SyncTests().pull(phone, since: cursor).decoded(Changes.self)

            // verify
            #expect(phoneEdit.results[0].status == .applied)
            #expect(tabletEdit.results[0].status == .conflict)
            #expect(tabletEdit.results[0].record?.value["title"] as? String == "Concert, front row")
            #expect(tabletEdit.results[0].record?.value["version"] as? Int == 2)
            #expect(changes.records.map { $0.record.value["title"] as? String } == ["Concert, front row"])
        }
    }

    @Test(
        "a delete leaves a tombstone for the other device; a stale delete is a conflict, one of a record gone is applied"
    )
    func delete() async throws {
        try await withTestApp { app in
            // setup
            let (phone, adaID) = try await app.patient("ada@example.org")
            let (kept, gone) = (UUID(), UUID())
            _ = try await SyncTests().push(
                phone,
                [
                    [
                        "id": .string(kept.uuidString), "type": "record.create", "recordKind": "event",
                        "record": Self.event(app, title: "Kept"),
                    ],
                    [
                        "id": .string(gone.uuidString), "type": "record.create", "recordKind": "event",
                        "record": Self.event(app, title: "Gone"),
                    ],
                ])
            _ = try await phone.send(
                .PATCH, "/me/events/\(kept)", json: Self.event(app, title: "Kept, edited").merging(["baseVersion": 1]))
            let cursor = try await SyncTests().pull(phone).decoded(Changes.self).cursor
            app.clock.advance(by: 60)
            func delete(_ id: UUID) -> JSONValue {
                [
                    "id": .string(UUID().uuidString), "type": "record.delete", "recordKind": "event",
                    "recordId": .string(id.uuidString), "baseVersion": 1,
                ]
            }

            // act
            let results = try await SyncTests().push(phone, [delete(gone), delete(kept), delete(gone)])
            let changes = try await SyncTests().pull(phone, since: cursor).decoded(Changes.self)

            // verify
            #expect(results.results.map(\.status) == [.applied, .conflict, .applied])
            #expect(results.results[0].deleted == true && results.results[2].deleted == true)
            #expect(results.results[1].record?.value["title"] as? String == "Kept, edited")
            #expect(changes.deleted.map(\.id) == [gone.uuidString.lowercased()])
            #expect(changes.deleted.map(\.entity) == [.event])
            let stored = try await EntryRecord.query(on: app.database).filter(\.$patient.$id == adaID).all()
            #expect(try stored.map { try $0.requireID() } == [kept])
        }
    }
}
