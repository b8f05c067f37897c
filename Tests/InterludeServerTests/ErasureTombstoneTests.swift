import Fluent
import Foundation
import Logging
import SQLKit
import Testing
import VaporTesting

@testable import InterludeServer

@Suite("Erasure that holds")
struct ErasureTombstoneTests {
    /// The keyed hashes stored in `erased_ids`.
    static func digests(_ app: TestContext) async throws -> Set<String> {
        Set(try await ErasedIDRecord.query(on: app.database).all(\.$digest))
    }

    static func digest(_ id: String, _ app: TestContext) async throws -> String {
        try await app.app.interlude.serverSecret.digest(id.lowercased(), on: app.database, now: app.clock.now)
    }

    @Test("an erasure keeps the keyed hash of every id it removed, never the id, and a tombstone naming nobody")
    func hashesOfEveryID() async throws {
        try await withTestApp { app in
            // setup
            let account = try await ErasureTests().fullAccount(app)
            let ids = account.identifiers.filter { UUID(uuidString: $0) != nil }

            // act
            _ = try await account.patient.send(.DELETE, "/me", json: ["password": .string(TestContext.password)])

            // verify
            let stored = try await Self.digests(app)
            #expect(ids.count > 10)
            for id in ids {
                #expect(stored.contains(try await Self.digest(id, app)), "no hash of \(id)")
            }
            let rows =
                try await ErasureTests.rows(of: ErasedIDRecord.schema, app)
                + ErasureTests.rows(of: ErasureRecord.schema, app)
            #expect(!rows.contains { row in ids.contains { row.contains($0) } })
            let tombstone = try #require(try await ErasureRecord.query(on: app.database).first())
            #expect(tombstone.scope == .account)
            #expect(tombstone.role == .patient)
        }
    }

    @Test("the person gets a receipt with what was removed, per kind, and when")
    func receipt() async throws {
        try await withTestApp { app in
            // setup
            let account = try await ErasureTests().fullAccount(app)
            let before = app.mailer.sent.count

            // act
            _ = try await account.patient.send(.DELETE, "/me", json: ["password": .string(TestContext.password)])

            // verify
            let mail = try #require(app.mailer.sent.dropFirst(before).last)
            #expect(mail.to == "ada@example.org")
            #expect(mail.subject == "Your data has been deleted")
            #expect(mail.text.contains("- accounts: 1"))
            #expect(mail.text.contains("- questionnaire answers: 2"))
            #expect(mail.text.contains("March 2, 2026"))
            #expect(!mail.text.contains("audit"))
        }
    }

    @Test("the outbox's messages to the erased person are removed, others' stay")
    func outboxCleaned() async throws {
        let outbox = FileManager.default.temporaryDirectory.appendingPathComponent("outbox-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: outbox) }
        try await withTestApp(settings: { $0.mail = .outbox(outbox.path) }) { app in
            // setup
            let (patient, _) = try await app.patient("ada@example.org")
            _ = try await app.patient("bob@example.org")
            let mailer = OutboxMailer(
                directory: outbox.path, from: "Interlude <noreply@interlude.test>", logger: Logger(label: "test"))
            for address in ["ada@example.org", "bob@example.org", "Ada@Example.org"] {
                try await mailer.send(EmailMessage(to: address, subject: "Hello", text: "Hi", html: "<p>Hi</p>"))
            }

            // act
            _ = try await patient.send(.DELETE, "/me", json: ["password": .string(TestContext.password)])

            // verify
            let left = try FileManager.default.contentsOfDirectory(atPath: outbox.path)
            #expect(left.count == 1)
            let data = try Data(contentsOf: outbox.appendingPathComponent(try #require(left.first)))
            #expect(OutboxMail.recipient(of: data) == "bob@example.org")
        }
    }

    @Test("an upload naming an erased id is refused as erased; a fresh id is taken")
    func syncRefusesErasedIDs() async throws {
        try await withTestApp { app in
            // setup
            let (_, patient, _, promptID) = try await QuestionnaireAPITests().setUp(app, instrument: "who-5")
            let mutationID = UUID().uuidString.lowercased()
            let first = try await SyncTests().push(patient, [SyncTests().createAppointment(app, id: mutationID)])
            try #require(first.results.map(\.status) == [.applied])
            let responseID = UUID().uuidString.lowercased()
            let answered = try await patient.send(
                .POST, "/me/responses",
                json: [
                    "id": .string(responseID), "promptId": .string(promptID), "instrumentKey": "who-5", "version": 1,
                    "answers": SyncTests.who5, "completedAt": QuestionnaireAPITests.iso(app.clock.now),
                ])
            try #require(answered.status == .created)
            _ = try await patient.send(.DELETE, "/me", json: ["password": .string(TestContext.password)])
            let (other, _) = try await app.patient("other@example.org")
            try await app.pair(other, with: try await app.staff("therapist", "huber@praxis.example").client)

            // act
            let replayed = try await SyncTests().push(other, [SyncTests().createAppointment(app, id: mutationID)])
            let resent = try await other.send(
                .POST, "/me/responses",
                json: [
                    "id": .string(responseID), "promptId": .string(promptID), "instrumentKey": "who-5", "version": 1,
                    "answers": SyncTests.who5, "completedAt": QuestionnaireAPITests.iso(app.clock.now),
                ])
            let fresh = try await SyncTests().push(
                other,
                [
                    [
                        "id": .string(UUID().uuidString), "type": "appointment.create",
                        "appointment": SyncTests.appointment(app, title: "New", days: 1, hour: 9),
                    ]
                ])

            // verify
            #expect(replayed.results.map(\.status) == [.rejected])
            #expect(replayed.results.first?.problem?._type == "/problems/erased")
            #expect(resent.status == .gone)
            #expect(resent.body["type"].string == "/problems/erased")
            #expect(fresh.results.map(\.status) == [.applied])
            #expect(
                try await SyncMutationRecord.find(try #require(UUID(uuidString: mutationID)), on: app.database) == nil)
        }
    }

    @Test("a backup restored after an erasure holds the person again until `erasures apply` erases them once more")
    func restoredBackup() async throws {
        guard TestDatabase.postgresURL == nil else { return }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("backup-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let live = folder.appendingPathComponent("live.sqlite").path
        let backup = folder.appendingPathComponent("backup.sqlite").path
        var account: ErasureTests.FullAccount?
        var list = ""
        var key = ""
        // A server with a file database: a backup, then the erasure, then the list an operator keeps.
        try await withTestApp(settings: { $0.database = .sqliteFile(live) }) { app in
            account = try await ErasureTests().fullAccount(app)
            key = app.settings.dataKey ?? ""
            let size = try await DatabaseBackup(database: app.database, settings: app.settings).write(to: backup)
            #expect(size > 0)
            await #expect(throws: DatabaseBackup.Failure.self) {
                try await DatabaseBackup(database: app.database, settings: app.settings).write(to: backup)
            }
            _ = try await account?.patient.send(.DELETE, "/me", json: ["password": .string(TestContext.password)])
            let entries = try await ErasedIDs(database: app.database, services: app.app.interlude).list(since: .t0)
            list = ([ErasedIDs.Entry.header] + entries.map(\.line)).joined(separator: "\n")
        }
        let lines = list.split(separator: "\n").filter { !$0.hasPrefix("#") }
        let entries = lines.compactMap(ErasedIDs.Entry.init(line:))
        #expect(entries.count == lines.count && entries.count > 10)
        let erased = try #require(account)

        // The backup, restored.
        try await withTestApp(settings: {
            $0.database = .sqliteFile(backup)
            $0.dataKey = key
        }) { app in
            let before = try await ErasureTests().traces(of: erased, app)
            #expect(try await app.count("erasures") == 0)

            // act
            let outcome = try await ErasureReplay(database: app.database, services: app.app.interlude).apply(entries)
            let again = try await ErasureReplay(database: app.database, services: app.app.interlude).apply(entries)

            // verify
            #expect(before.values.map(\.count).reduce(0, +) > 10)
            #expect(outcome.tombstonesAdded == 1 && outcome.accounts == 1)
            #expect(again == .init())
            #expect(try await ErasureTests().traces(of: erased, app).isEmpty)
            #expect(try await app.count("erasures") == 1)
            #expect(try await app.count("users WHERE email = 'bob@example.org'") == 1)
        }
    }

    @Test("every table an erasure empties has a name the receipt can show")
    func receiptNamesEveryTable() async throws {
        try await withTestApp { app in
            for table in ErasureMap.personalTables {
                #expect(app.app.interlude.localizer.has("erasure.table.\(table)"), "\(table)")
            }
        }
    }
}
