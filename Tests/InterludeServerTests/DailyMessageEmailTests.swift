import Fluent
import Foundation
import InterludeCore
import Testing
import VaporTesting

@testable import InterludeServer

@Suite("The daily email of a study's messages")
struct DailyMessageEmailTests {
    let vienna = TimeZone(identifier: "Europe/Vienna")!

    func dispatch(_ app: TestContext) async throws -> NotificationDispatcher.Report {
        try await NotificationDispatcher(
            database: app.database, services: app.app.interlude, channels: app.app.notificationChannels
        ).dispatch(now: app.clock.now)
    }

    /// Two of the study's messages reach a patient without a device for push, now.
    func twoMessages(_ app: TestContext, _ patientID: UUID) async throws -> [UUID] {
        let service = InterventionService(database: app.database, services: app.app.interlude)
        var ids: [UUID] = []
        for text in ["Take a breath.", "Notice one good thing today."] {
            ids.append(
                try await service.deliver(
                    InterventionDraft(kind: .message, text: text), to: patientID, studyID: nil, origin: .messagePlan,
                    senderID: nil
                ).id)
        }
        try await service.notify(about: try await InterventionRecord.query(on: app.database).filter(\.$id ~~ ids).all())
        return ids
    }

    /// Every category wanted, and the study's messages by email as `messageEmails` says.
    static func chooseMessageEmails(_ patient: APIClient, _ messageEmails: String) async throws -> APIClient.Reply {
        try await patient.send(
            .PUT, "/me/notification-preferences",
            json: [
                "questionnaires": true, "interventions": true, "appointments": true, "messages": true,
                "messageEmails": .string(messageEmails),
            ])
    }

    func dailyEmails(_ app: TestContext) -> [EmailMessage] {
        app.mailer.sent.filter { $0.subject == "Messages are waiting for you" }
    }

    @Test("messages wait for one email at 18:00 in the person's zone that counts the unread ones and says since when")
    func oneEmailADay() async throws {
        try await withTestApp { app in
            // setup
            let (patient, patientID) = try await app.patient()
            let ids = try await twoMessages(app, patientID)
            let before = app.mailer.sent.count

            // act: the messages are due now
            let first = try await dispatch(app)

            // verify: nothing is emailed yet; the day's email waits for 18:00 in Vienna
            #expect(first.withheld == 2 && first.sent == 0)
            #expect(app.mailer.sent.count == before)
            let daily = try #require(
                try await NotificationRecord.query(on: app.database)
                    .filter(\.$dedupeKey =~ NotificationDispatcher.dailyEmailPrefix).all().first)
            #expect(daily.dueAt == MessageDigest.moment(onOrAfter: app.clock.now, in: vienna))
            #expect(LocalDateTime(daily.dueAt, in: vienna).time == MessageDigest.time)

            // act: one message is read in the app, then the evening comes
            #expect(try await patient.send(.POST, "/me/interventions/\(ids[0].lowercasedText)/seen").status == .ok)
            app.clock.advance(by: daily.dueAt.timeIntervalSince(app.clock.now) + 1)
            let evening = try await dispatch(app)

            // verify: one email, with the one still unread and its time in the person's zone
            #expect(evening.sent == 1)
            let email = try #require(dailyEmails(app).first)
            #expect(dailyEmails(app).count == 1)
            #expect(email.text.contains("A message from your study has been waiting since"))
            let since = DateDisplay(language: .en, timeZone: vienna).dayDateTime(
                try #require(try await InterventionRecord.find(ids[1], on: app.database)).deliverAt)
            #expect(email.text.contains(since), "\(email.text)")
            #expect(email.text.contains("/app/interventions"))
            #expect(!email.text.contains("Notice one good thing"))
        }
    }

    @Test("a person who chose one email per message gets each at once; messages all read by the evening send nothing")
    func eachOrNothing() async throws {
        try await withTestApp { app in
            let (patient, patientID) = try await app.patient()
            let chosen = try await Self.chooseMessageEmails(patient, "each")
            #expect(chosen.status == .ok, "\(chosen.text)")
            #expect(chosen.body["messageEmails"].string == "each")
            _ = try await twoMessages(app, patientID)

            let report = try await dispatch(app)

            #expect(report.sent == 2)
            #expect(app.mailer.sent.filter { $0.subject == "A message for you" }.count == 2)

            // The other way round: back to the daily email, every message read before it goes.
            let (reader, readerID) = try await app.patient("reader@example.org")
            let ids = try await twoMessages(app, readerID)
            _ = try await dispatch(app)
            for id in ids {
                #expect(try await reader.send(.POST, "/me/interventions/\(id.lowercasedText)/seen").status == .ok)
            }
            app.clock.advance(by: 86_400)
            let evening = try await dispatch(app)
            #expect(evening.expired == 1 && evening.sent == 0)
            #expect(dailyEmails(app).isEmpty)
        }
    }

    @Test("a choice that is neither is refused, naming the field")
    func refused() async throws {
        try await withTestApp { app in
            let (patient, _) = try await app.patient()
            let reply = try await Self.chooseMessageEmails(patient, "hourly")
            #expect(reply.status.code / 100 == 4)
            #expect(reply.text.contains("messageEmails"), "\(reply.text)")
            let stored = try await patient.send(.GET, "/me/notification-preferences")
            #expect(stored.body["messageEmails"].string == "daily")
        }
    }
}
