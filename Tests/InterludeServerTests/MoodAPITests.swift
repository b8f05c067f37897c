import Fluent
import Foundation
import InterludeCore
import Testing
import VaporTesting

@testable import InterludeServer

@Suite("Mood reports: the person's own diary of how they feel")
struct MoodAPITests {
    static func mood(
        _ app: TestContext, id: UUID = UUID(), valence: Double = 0.7, hoursAgo: Double = 1, note: String? = nil
    ) -> JSONValue {
        var body: [String: JSONValue] = [
            "id": .string(id.uuidString), "valence": .number(valence),
            "recordedAt": QuestionnaireAPITests.iso(app.clock.now.addingTimeInterval(-hoursAgo * 3600)),
        ]
        if let note { body["note"] = .string(note) }
        return .object(body)
    }

    @Test(
        "a mood is recorded once, its note sealed, changed in time and value against its version, and deleted; wrong values are named"
    )
    func lifecycle() async throws {
        try await withTestApp { app in
            // setup
            let (ada, adaID) = try await app.patient("ada@example.org")
            let id = UUID()

            // act
            let created = try await ada.send(
                .POST, "/me/moods", json: Self.mood(app, id: id, note: "Argument with my sister"))
            let repeated = try await ada.send(
                .POST, "/me/moods", json: Self.mood(app, id: id, note: "Argument with my sister"))
            _ = try await ada.send(.POST, "/me/moods", json: Self.mood(app, valence: 0.2, hoursAgo: 30))
            let refused = try await ada.send(.POST, "/me/moods", json: Self.mood(app, valence: 0.5, hoursAgo: -2))
            let beyondScale = try await ada.send(.POST, "/me/moods", json: Self.mood(app, valence: 1.5, hoursAgo: -2))
            let changed = try await ada.send(
                .PATCH, "/me/moods/\(id)",
                json: [
                    "baseVersion": 1, "valence": 0.4,
                    "recordedAt": QuestionnaireAPITests.iso(app.clock.now.addingTimeInterval(-7200)),
                ])
            let stale = try await ada.send(
                .PATCH, "/me/moods/\(id)",
                json: [
                    "baseVersion": 1, "valence": 0.9, "recordedAt": QuestionnaireAPITests.iso(app.clock.now),
                ])
            let listed = try await ada.send(.GET, "/me/moods").decoded([Components.Schemas.Mood].self)
            let stored = try #require(try await EntryRecord.find(id, on: app.database))
            let deleted = try await ada.send(.DELETE, "/me/moods/\(id)?baseVersion=2")
            let afterDelete = try await ada.send(.GET, "/me/moods").decoded([Components.Schemas.Mood].self)

            // verify
            #expect(created.status == .created && repeated.status == .ok)
            #expect(refused.body.problemFields == ["recordedAt"])
            #expect(
                beyondScale.status == .unprocessableEntity && beyondScale.body.problemFields == ["valence"],
                "the door, first")
            #expect(changed.status == .ok && changed.body["version"].int == 2 && changed.body["valence"].double == 0.4)
            #expect(changed.body["note"].isNull, "a change without a note clears it")
            #expect(stale.status == .conflict)
            #expect(listed.map(\.valence) == [0.4, 0.2], "newest first")
            #expect(stored.kind == .mood && stored.$patient.id == adaID)
            #expect(
                stored.content.hasPrefix(FieldCipher.prefix) && !stored.content.contains("sister"), "sealed at rest")
            #expect(deleted.status == .noContent)
            #expect(afterDelete.map(\.valence) == [0.2])
        }
    }
}
