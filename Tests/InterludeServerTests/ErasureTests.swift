import Fluent
import Foundation
import SQLKit
import Testing
import VaporTesting

@testable import InterludeServer

@Suite("Account deletion")
struct ErasureTests {
    /// Every table of the schema, read from the database itself.
    static func tables(_ app: TestContext) async throws -> [String] {
        let query: SQLQueryString =
            TestDatabase.postgresURL == nil
            ? "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
            : "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema()"
        return try await app.sql.raw(query).all().map { try $0.decode(column: "name", as: String.self) }
    }

    /// Every row of `table` as text, whatever the engine stores its values as.
    static func rows(of table: String, _ app: TestContext) async throws -> [String] {
        if TestDatabase.postgresURL != nil {
            return try await app.sql.raw("SELECT CAST(t AS text) AS row FROM \(ident: table) AS t").all()
                .map { try $0.decode(column: "row", as: String.self).lowercased() }
        }
        return try await app.sql.raw("SELECT * FROM \(ident: table)").all().map { row in
            row.allColumns.map { column in
                if let text = try? row.decode(column: column, as: String.self) { return text.lowercased() }
                if let id = try? row.decode(column: column, as: UUID.self) { return id.uuidString.lowercased() }
                return ""
            }.joined(separator: "|")
        }
    }

    /// The ids of every row that names `personID`, in every table but the audit log (whose rows are about who
    /// looked, not about the person): the person's responses, prompts, alerts, notifications, devices and the rest.
    static func ownedIDs(of personID: UUID, _ app: TestContext) async throws -> Set<String> {
        let person = personID.uuidString.lowercased()
        var ids: Set<String> = []
        for table in try await tables(app) where table != AuditEventRecord.schema {
            let query: SQLQueryString =
                TestDatabase.postgresURL == nil
                ? "SELECT * FROM \(ident: table)" : "SELECT CAST(t AS text) AS row, t.* FROM \(ident: table) AS t"
            for row in try await app.sql.raw(query).all() {
                guard let id = try? row.decode(column: "id", as: UUID.self) else { continue }
                let text =
                    (try? row.decode(column: "row", as: String.self))
                    ?? row.allColumns.compactMap { column in
                        (try? row.decode(column: column, as: UUID.self))?.uuidString
                            ?? (try? row.decode(column: column, as: String.self))
                    }.joined(separator: "|")
                if text.lowercased().contains(person) { ids.insert(id.uuidString.lowercased()) }
            }
        }
        return ids
    }

    /// The keyed hashes under which rate limits count an account's failures.
    static func rateLimitKeys(of id: UUID, email: String, _ app: TestContext) async throws -> [String] {
        var keys: [String] = []
        for subject in [RateLimiter.Subject.account(email: email), .account(id: id)] {
            keys.append(
                try await app.app.interlude.serverSecret.digest(subject.raw, on: app.database, now: app.clock.now))
        }
        return keys
    }

    @Test("every table of the schema is named in the erasure map")
    func mapCoversSchema() async throws {
        try await withTestApp { app in
            // setup
            let named = Set(ErasureMap.personalTables).union(ErasureMap.impersonalTables)

            // act
            let tables = try await Self.tables(app)

            // verify
            #expect(tables.count >= 14)
            for table in tables {
                #expect(named.contains(table), "table \(table) is not in ErasureMap")
            }
        }
    }

    /// A patient with everything an account can have, and another patient of the same therapist.
    struct FullAccount {
        let therapist: APIClient
        let patient: APIClient
        let otherID: UUID
        /// Everything that names the patient: ids, address, pseudonym, name, birth date and ids of what they own.
        let identifiers: [String]
        let rateLimitKeys: [String]
    }

    func fullAccount(_ app: TestContext) async throws -> FullAccount {
        let (therapist, _) = try await app.staff("therapist", "berger@praxis.example")
        let (researcher, _) = try await app.staff("researcher", "lab@uni.example")
        let (patient, patientID) = try await app.patient("ada@example.org", name: "Ada Lovelace")
        let (other, otherID) = try await app.patient("bob@example.org")
        try await app.pair(patient, with: therapist, born: "1985-11-03")
        try await app.pair(other, with: therapist)
        let studyID = try await StudyAPITests().createStudy(researcher, StudyAPITests.study("approval"))
        _ = try await patient.send(.POST, "/studies/\(studyID)/enrollment", json: ["consentVersion": "2026-1"])
        _ = try await researcher.send(.GET, "/studies/\(studyID)/enrollments")
        _ = try await therapist.send(.GET, "/patients/\(patientID.uuidString)")
        let assigned = try await therapist.send(
            .POST, "/patients/\(patientID.uuidString)/prompts",
            json: [
                "instrumentKey": "mood-vas", "opensAt": QuestionnaireAPITests.iso(app.clock.now),
                "closesAt": QuestionnaireAPITests.iso(app.clock.now.addingTimeInterval(3600)),
            ])
        let submitted = try await patient.send(
            .POST, "/me/responses",
            json: [
                "id": .string(UUID().uuidString), "promptId": .string(assigned.body["id"].string ?? ""),
                "instrumentKey": "mood-vas", "version": 1, "answers": ["mood": 40, "note": "Ada Lovelace wrote this"],
                "completedAt": QuestionnaireAPITests.iso(app.clock.now),
            ])
        try #require(submitted.status == .created)
        _ = try await therapist.send(.GET, "/patients/\(patientID.uuidString)/responses")
        let sent = try await therapist.send(
            .POST, "/patients/\(patientID.uuidString)/interventions",
            json: ["kind": "commendation", "text": "Well done."])
        try #require(sent.status == .created)
        _ = try await InterventionTests().answer(
            app, therapist: therapist, patient: patient, patientID: patientID,
            answers: QuestionnaireAPITests.phqAnswers([0, 0, 0, 0, 0, 0, 0, 0, 1]))
        let alertID = try #require(
            try await therapist.send(.GET, "/alerts").decoded([Components.Schemas.Alert].self).first?.id)
        try #require(
            try await therapist.send(.POST, "/alerts/\(alertID)/acknowledgement", json: ["note": "Called."]).status
                == .ok)
        let backup = try await patient.send(
            .PUT, "/me/backup", json: ["baseVersion": 0, "envelope": InterventionTests.envelope])
        try #require(backup.status == .ok)
        let event: JSONValue = [
            "id": .string(UUID().uuidString), "title": "Concert",
            "occurredAt": QuestionnaireAPITests.iso(app.clock.now), "type": "tinnitusAttack",
            "description": "Ada Lovelace's ears rang",
        ]
        try #require(try await patient.send(.POST, "/me/events", json: event).status == .created)
        try #require(
            try await patient.send(
                .POST, "/me/therapies",
                json: [
                    "id": .string(UUID().uuidString), "name": "Hearing aid", "type": "hearingAid",
                    "startDate": "2026-01-10",
                ]
            ).status == .created)
        let deleted = UUID()
        try #require(
            try await patient.send(.POST, "/me/audiograms", json: AudiogramAPITests.body(app, id: deleted)).status
                == .created)
        try #require(try await patient.send(.DELETE, "/me/audiograms/\(deleted)?baseVersion=1").status == .noContent)
        try #require(
            try await patient.send(.POST, "/me/audiograms", json: AudiogramAPITests.body(app)).status == .created)
        _ = try await app.api.send(.POST, "/password-resets", json: ["email": "ada@example.org"])
        _ = try await app.api.send(
            .POST, "/sessions", json: ["email": "ada@example.org", "password": "wrong password"])
        _ = try await patient.send(.PATCH, "/me", json: ["shareWithResearch": false])
        let pseudonym = try #require(
            try await patient.send(.GET, "/me").decoded(Components.Schemas.User.self).patient?.pseudonym)
        let owned = try await Self.ownedIDs(of: patientID, app)
        try #require(owned.count > 10, "responses, prompts, alerts, notifications and more belong to the patient")
        return FullAccount(
            therapist: therapist, patient: patient, otherID: otherID,
            identifiers: [
                patientID.uuidString.lowercased(), "ada@example.org", pseudonym.lowercased(), "ada lovelace",
                "1985-11-03",
            ] + owned,
            rateLimitKeys: try await Self.rateLimitKeys(of: patientID, email: "ada@example.org", app))
    }

    /// The rows of every table that name the patient.
    func traces(of account: FullAccount, _ app: TestContext) async throws -> [String: [String]] {
        var found: [String: [String]] = [:]
        for table in try await Self.tables(app) {
            let rows = try await Self.rows(of: table, app).filter { row in
                account.identifiers.contains { row.contains($0) }
            }
            if !rows.isEmpty { found[table] = rows }
        }
        return found
    }

    @Test(
        "after deletion no column of any table names the person: no id of theirs, address, pseudonym, name or birth date"
    )
    func deleteAccount() async throws {
        try await withTestApp { app in
            // setup
            let account = try await fullAccount(app)
            let before = try await traces(of: account, app)
            let limits = "rate_limit_events WHERE key IN ('\(account.rateLimitKeys.joined(separator: "','"))')"
            let limitsBefore = try await app.count(limits)

            // act
            let deleted = try await account.patient.send(
                .DELETE, "/me", json: ["password": .string(TestContext.password)])

            // verify
            #expect(before.values.map(\.count).reduce(0, +) > 10)
            #expect(limitsBefore > 0)
            #expect(deleted.status == .noContent)
            #expect(try await traces(of: account, app).isEmpty)
            #expect(try await app.count("erasures") == 1)
            for table in ["responses", "prompts", "interventions", "alerts", "rule_firings", "intervention_backups"] {
                #expect(try await app.count(table) == 0, "\(table)")
            }
            #expect(try await app.count(limits) == 0)
            #expect(try await app.count("audit_events") > 0)
        }
    }

    @Test(
        "deletion takes invitations naming the person, outbox mail to every address they had, and a copy finished after it"
    )
    func deletionReachesEveryAddress() async throws {
        let outbox = FileManager.default.temporaryDirectory.appendingPathComponent("outbox-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: outbox) }
        try await withTestApp(settings: { $0.mail = .outbox(outbox.path) }) { app in
            // setup: Ada was invited, changed her address, and asked for a copy of her data, being written
            let (therapist, _) = try await app.staff("therapist", "tess@example.org")
            try #require(
                try await therapist.send(.POST, "/patients/invitations", json: ["email": "ada@example.org"]).status
                    == .created)
            let (ada, adaID) = try await app.patient("ada@example.org")
            try await EmailTokenRecord(
                userID: adaID, purpose: .verification, tokenHash: "former-link", email: "ada.former@example.org",
                expiresAt: app.clock.now.addingTimeInterval(86_400), now: app.clock.now
            ).create(on: app.database)
            let mailer = OutboxMailer(
                directory: outbox.path, from: "Interlude <noreply@interlude.test>", logger: app.app.logger)
            for address in ["ada.former@example.org", "ada@example.org", "ben@example.org"] {
                try await mailer.send(EmailMessage(to: address, subject: "Hello", text: "Hello", html: "<p>Hello</p>"))
            }
            try #require(try await ada.send(.POST, "/me/export").status == .accepted)
            let copy = try #require(try await SelfExportRecord.query(on: app.database).first())
            copy.status = .running
            try await copy.save(on: app.database)
            let user = try #require(try await UserRecord.find(adaID, on: app.database))

            // act: the account goes while the copy is written; the writing ends after it
            let deleted = try await ada.send(.DELETE, "/me", json: ["password": .string(TestContext.password)])
            let service = SelfExportService(database: app.database, services: app.app.interlude)
            let written = FileManager.default.temporaryDirectory.appendingPathComponent("copy-\(UUID().uuidString).zip")
            try Data("PK".utf8).write(to: written)
            try await app.app.interlude.files(on: app.database).put(.selfExport(try copy.requireID()), from: written)
            let mailsBefore = app.mailer.sent.count
            let delivered = try await service.deliver(copy, size: 2, to: user)

            // verify
            #expect(deleted.status == .noContent)
            #expect(try await app.count("email_tokens") == 0, "Tess's invitation named Ada's address")
            let left = try FileManager.default.contentsOfDirectory(atPath: outbox.path).filter { $0.hasSuffix(".eml") }
            #expect(left.count == 1, "only Ben's mail stays")
            #expect(!delivered)
            #expect(try await !app.stores(.selfExport(try copy.requireID())))
            #expect(app.mailer.sent.count == mailsBefore, "nobody is told of a copy that no longer exists")
        }
    }

    @Test("a deleted account neither works nor signs in again, and the therapist's other patient is untouched")
    func deletedAccountGone() async throws {
        try await withTestApp { app in
            // setup
            let account = try await fullAccount(app)

            // act
            _ = try await account.patient.send(.DELETE, "/me", json: ["password": .string(TestContext.password)])

            // verify
            #expect(try await account.patient.send(.GET, "/me").status == .unauthorized)
            let login = try await app.api.send(
                .POST, "/sessions", json: ["email": "ada@example.org", "password": .string(TestContext.password)])
            #expect(login.status == .unauthorized)
            let caseload = try await account.therapist.send(.GET, "/patients").decoded(
                [Components.Schemas.CaseloadPatient].self)
            #expect(caseload.map(\.id) == [account.otherID.uuidString.lowercased()])
        }
    }

    @Test("deleting an account needs its password; with a wrong one nothing is deleted")
    func deleteNeedsPassword() async throws {
        try await withTestApp { app in
            // setup
            let (patient, _) = try await app.patient("ada@example.org")

            // act
            let wrong = try await patient.send(.DELETE, "/me", json: ["password": "not my password"])

            // verify
            #expect(wrong.status == .unprocessableEntity)
            #expect(wrong.body.problemFields == ["password"])
            #expect(try await app.count("users WHERE email = 'ada@example.org'") == 1)
            #expect(try await patient.send(.GET, "/me").status == .ok)
        }
    }

    @Test("staff accounts are not deleted through the patient endpoint")
    func staffCannotSelfDelete() async throws {
        try await withTestApp { app in
            // setup
            let (therapist, _) = try await app.staff("therapist", "berger@praxis.example")

            // act
            let reply = try await therapist.send(.DELETE, "/me", json: ["password": .string(TestContext.password)])

            // verify
            #expect(reply.status == .forbidden)
            #expect(try await app.count("users") == 1)
        }
    }
}
