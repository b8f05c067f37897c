import Fluent
import Foundation
import InterludeCore
import Testing
import VaporTesting

@testable import InterludeServer

@Suite("A reminder when a therapy's end approaches")
struct TherapyReminderTests {
    func collect(_ app: TestContext) async throws -> [NotificationRecord] {
        _ = try await NotificationOutbox(database: app.database, localizer: app.app.interlude.localizer).collect(
            now: app.clock.now)
        return try await NotificationRecord.query(on: app.database).filter(\.$category == .messages).all()
    }

    static func therapy(_ id: UUID, ends: String?, name: String = "Hearing aid trial") -> JSONValue {
        [
            "id": .string(id.uuidString), "name": .string(name), "type": "hearingAid", "startDate": "2026-02-01",
            "endDate": JSONValue(ends),
        ]
    }

    @Test(
        "the reminder comes at 9:00 a week before the end, once, also after an edit that keeps the end; a moved end is announced again"
    )
    func weekBefore() async throws {
        try await withTestApp { app in
            // setup: t0 is Monday 2 March 2026, 09:00 in Vienna; the therapy ends on Friday 13 March
            let (ada, _) = try await app.patient("ada@example.org")
            let (ben, _) = try await app.patient("ben@example.org")
            let id = UUID()
            try #require(
                try await ada.send(.POST, "/me/therapies", json: Self.therapy(id, ends: "2026-03-13")).status
                    == .created)
            try #require(
                try await ben.send(.POST, "/me/therapies", json: Self.therapy(UUID(), ends: nil)).status == .created)

            // act
            let early = try await collect(app)
            app.clock.advance(by: 4 * 86_400)
            let onTheDay = try await collect(app)
            _ = try await ada.send(
                .PATCH, "/me/therapies/\(id)",
                json: Self.therapy(id, ends: "2026-03-13", name: "Hearing aids").merging(["baseVersion": 1]))
            let afterEdit = try await collect(app)
            _ = try await ada.send(
                .PATCH, "/me/therapies/\(id)", json: Self.therapy(id, ends: "2026-03-11").merging(["baseVersion": 2]))
            let afterMove = try await collect(app)

            // verify
            #expect(early.isEmpty)
            #expect(onTheDay.count == 1)
            let reminder = try #require(onTheDay.first)
            #expect(reminder.title == "A therapy ends soon" && reminder.path == "/app/therapies")
            #expect(!reminder.body.contains("Hearing aid"), "what the person wrote stays out of notifications")
            #expect(afterEdit.count == 1)
            #expect(afterMove.count == 2)
        }
    }

    @Test("an end entered less than a week ahead is announced at once; an end in the past or none never")
    func late() async throws {
        try await withTestApp { app in
            // setup
            let (ada, _) = try await app.patient("ada@example.org")

            // act
            _ = try await ada.send(.POST, "/me/therapies", json: Self.therapy(UUID(), ends: "2026-03-01"))
            _ = try await ada.send(.POST, "/me/therapies", json: Self.therapy(UUID(), ends: "2026-03-02"))
            let none = try await collect(app)
            _ = try await ada.send(.POST, "/me/therapies", json: Self.therapy(UUID(), ends: "2026-03-05"))
            let soon = try await collect(app)

            // verify
            #expect(none.isEmpty)
            #expect(soon.count == 1 && soon.first?.dueAt == app.clock.now)
        }
    }
}
