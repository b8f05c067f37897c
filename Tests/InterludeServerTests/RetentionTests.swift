import Fluent
import Foundation
import Logging
import Testing
import VaporTesting

@testable import InterludeServer

@Suite("Retention")
struct RetentionTests {
    @Test("the retention job removes exactly what is past its period and keeps what is not")
    func removesWhatIsPastItsPeriod() async throws {
        let outbox = FileManager.default.temporaryDirectory.appendingPathComponent("retention-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: outbox) }
        try await withTestApp(settings: { $0.mail = .outbox(outbox.path) }) { app in
            // setup: for every kind one item a day past its period and one a day short of it
            let (_, therapistID) = try await app.staff("therapist", "berger@praxis.example")
            let (_, patientID) = try await app.patient("ada@example.org")
            let now = app.clock.now
            let day: TimeInterval = 86_400
            func ago(_ days: Double) -> Date { now.addingTimeInterval(-days * day) }
            for days in [8.0, 6.0] {
                try await SessionRecord(
                    userID: patientID, kind: .api, tokenHash: UUID().uuidString, csrfToken: nil, expiresAt: ago(days),
                    now: ago(40)
                )
                .create(on: app.database)
                try await EmailTokenRecord(
                    userID: patientID, purpose: .passwordReset, tokenHash: UUID().uuidString, email: "ada@example.org",
                    expiresAt: ago(days), now: ago(40)
                ).create(on: app.database)
                try await AccessTokenRecord(
                    userID: therapistID, name: "script", scope: .exportsRead, studyIDs: [],
                    tokenHash: UUID().uuidString, expiresAt: ago(days), now: ago(40)
                ).create(on: app.database)
            }
            for days in [31.0, 29.0] {
                let notification = NotificationRecord(
                    userID: patientID, category: .questionnaires, dedupeKey: UUID().uuidString,
                    title: "Your questionnaire", body: "Mood check",
                    path: "/app", dueAt: ago(days), expiresAt: ago(days - 1), now: ago(days))
                notification.status = .sent
                try await notification.create(on: app.database)
                let file = outbox.appendingPathComponent("\(Int(days)).eml")
                try FileManager.default.createDirectory(at: outbox, withIntermediateDirectories: true)
                try Data("To: ada@example.org\r\n\r\nHi".utf8).write(to: file)
                try FileManager.default.setAttributes([.modificationDate: ago(days)], ofItemAtPath: file.path)
            }
            let queued = NotificationRecord(
                userID: patientID, category: .questionnaires, dedupeKey: "queued", title: "Waiting", body: "Still due",
                path: "/app",
                dueAt: ago(40), expiresAt: now.addingTimeInterval(day), now: ago(40))
            try await queued.create(on: app.database)
            for days in [91.0, 89.0] {
                try await SyncMutationRecord(id: UUID(), userID: patientID, result: "{}", now: ago(days)).create(
                    on: app.database)
            }
            for days in [1.0, 0.0] {
                try await RateLimitEventRecord(
                    scope: .login, key: UUID().uuidString, occurredAt: ago(days) - RateLimiter.longestWindow + 1
                )
                .create(on: app.database)
            }
            for days in [10 * 365.25 + 1, 10 * 365.25 - 2] {
                try await AuditEventRecord(
                    actorID: therapistID, actorRole: .therapist, action: AuditAction.patientRead.rawValue,
                    subjectID: patientID, target: nil,
                    occurredAt: ago(days)
                ).create(on: app.database)
            }
            let audit = try await AuditEventRecord.query(on: app.database).count()

            // act
            let report = try await Retention(database: app.database, services: app.app.interlude).run()
            let again = try await Retention(database: app.database, services: app.app.interlude).run()

            // verify
            #expect(
                report
                    == .init(
                        sessions: 1, emailTokens: 1, accessTokens: 1, rateLimitEvents: 1, notificationTexts: 1,
                        syncMutations: 1, outboxFiles: 1, auditEvents: 1))
            #expect(again == .init())
            #expect(try await SessionRecord.query(on: app.database).filter(\.$expiresAt < ago(7)).count() == 0)
            #expect(try await SessionRecord.query(on: app.database).filter(\.$expiresAt == ago(6)).count() == 1)
            let texts = try await NotificationRecord.query(on: app.database).sort(\.$dueAt).all().map {
                "\($0.title)|\($0.body)"
            }
            #expect(texts == ["Waiting|Still due", "|", "Your questionnaire|Mood check"])
            #expect(try await NotificationRecord.query(on: app.database).count() == 3)
            #expect(try FileManager.default.contentsOfDirectory(atPath: outbox.path) == ["29.eml"])
            #expect(try await SyncMutationRecord.query(on: app.database).count() == 1)
            #expect(try await AuditEventRecord.query(on: app.database).count() == audit - 1)
        }
    }

    @Test(
        "after a closed study's retention period, those who took part in nothing else lose what identifies them; research data stays"
    )
    func closedStudyForgetsIdentities() async throws {
        try await withTestApp { app in
            // setup: Ada takes part only in the study, Ben also in a practice, Cleo in the study and another that runs
            let (researcher, _) = try await app.staff("researcher", "study@uni.example")
            let (therapist, _) = try await app.staff("therapist", "berger@praxis.example")
            let studyID = try await StudyAPITests().createStudy(researcher, StudyAPITests.study("open"))
            let otherStudy = try await StudyAPITests().createStudy(researcher, StudyAPITests.study("open"))
            let (ada, adaID) = try await app.patient("ada@example.org", name: "Ada Lovelace")
            let (ben, benID) = try await app.patient("ben@example.org")
            let (cleo, cleoID) = try await app.patient("cleo@example.org")
            for patient in [ada, ben, cleo] {
                try #require(try await StudyAPITests.join(patient, studyID).status == .created)
            }
            try await app.pair(ben, with: therapist)
            try #require(try await StudyAPITests.join(cleo, otherStudy).status == .created)
            let answered = try await ConsentVersionTests().answer(
                ada, adaID, in: ConsentVersionTests.Study(researcher: researcher, id: studyID), app)
            try #require(answered.status == .created)
            let profile = try #require(
                try await PatientProfileRecord.query(on: app.database).filter(\.$user.$id == adaID).first())
            let pseudonym = profile.pseudonym
            profile.dateOfBirth = "1990-05-17"
            profile.gender = "female"
            try await profile.save(on: app.database)
            // A copy of her data, written and waiting to be downloaded.
            try #require(try await ada.send(.POST, "/me/export").status == .accepted)
            _ = try await SelfExportService(database: app.database, services: app.app.interlude).runPending()
            let copyID = try #require(try await SelfExportRecord.query(on: app.database).first()?.id)
            try #require(try await app.stores(.selfExport(copyID)))
            let closed = try await researcher.send(
                .PUT, "/studies/\(studyID)",
                json: StudyAPITests.study("open", status: "closed").merging(["retentionDays": 30]))
            try #require(closed.status == .ok, "\(closed.text)")
            let retention = Retention(database: app.database, services: app.app.interlude)

            // act: a day short of the period, then a day past it
            app.clock.advance(by: 29 * 86_400)
            let early = try await retention.run()
            let stillSignedIn = try await ada.send(.GET, "/me")
            app.clock.advance(by: 2 * 86_400)
            let due = try await retention.run()
            let again = try await retention.run()

            // verify
            #expect(closed.body["closedAt"].string != nil)
            #expect(early.forgottenParticipants == 0)
            #expect(stillSignedIn.status == .ok)
            #expect(due.forgottenParticipants == 1)
            #expect(again.forgottenParticipants == 0)
            let adaNow = try #require(try await UserRecord.find(adaID, on: app.database))
            #expect(
                adaNow.email == "\(adaID.uuidString.lowercased())@forgotten.invalid" && adaNow.name == nil
                    && adaNow.deactivatedAt != nil)
            #expect(try await ada.send(.GET, "/me").status == .unauthorized)
            let signIn = try await app.api.send(
                .POST, "/sessions", json: ["email": "ada@example.org", "password": .string(TestContext.password)])
            #expect(signIn.status == .unauthorized)
            #expect(
                try await ResponseRecord.query(on: app.database).filter(\.$patient.$id == adaID).count() == 1,
                "research data stays")
            let kept = try #require(
                try await PatientProfileRecord.query(on: app.database).filter(\.$user.$id == adaID).first())
            #expect(kept.pseudonym == pseudonym && kept.dateOfBirth == nil && kept.gender == nil)
            #expect(try await !app.stores(.selfExport(copyID)), "the copy's file goes with its record")
            for (id, email) in [(benID, "ben@example.org"), (cleoID, "cleo@example.org")] {
                #expect(
                    try await UserRecord.find(id, on: app.database)?.email == email,
                    "\(email) takes part in something else")
            }
            let benAgain = try await app.api.send(
                .POST, "/sessions", json: ["email": "ben@example.org", "password": .string(TestContext.password)])
            #expect(benAgain.status == .created, "\(benAgain.text)")
        }
    }
}
