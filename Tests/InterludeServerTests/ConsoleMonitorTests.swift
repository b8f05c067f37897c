import Fluent
import Foundation
import InterludeCore
import Testing
import VaporTesting

@testable import InterludeServer

@Suite("Console: the study monitor")
struct ConsoleMonitorTests {
    /// The overview's study, and for Ada a phone whose subscription the push service said is gone: a prompt opened
    /// two hours ago whose notification met the gone subscription and reached nobody.
    func world(_ app: TestContext) async throws -> (
        console: ConsoleBrowser, studyID: String, ada: String, adaID: UUID, ben: String, benID: UUID
    ) {
        let (console, studyID, ada, ben) = try await ConsoleStudyOverviewTests().study(app)
        func id(_ pseudonym: String) async throws -> UUID {
            try #require(
                try await PatientProfileRecord.query(on: app.database).filter(\.$pseudonym == pseudonym).first()?
                    .$user.id)
        }
        let (adaID, benID) = (try await id(ada), try await id(ben))
        let now = app.clock.now
        let device = DeviceRecord(
            userID: adaID, platform: .webpush, address: "https://push.example/ada", p256dh: nil, auth: nil,
            now: now.addingTimeInterval(-86_400))
        device.disabledAt = now.addingTimeInterval(-7200)
        device.disabledReason = "webpush 410"
        try await device.create(on: app.database)
        let opens = now.addingTimeInterval(-7200)
        let prompt = PromptRecord(
            patientID: adaID, studyID: UUID(uuidString: studyID), assignedBy: nil, instrumentKey: "mood-vas",
            instrumentVersion: 1, opensAt: opens, closesAt: opens.addingTimeInterval(3600), source: .schedule, now: now)
        try await prompt.create(on: app.database)
        let notification = NotificationRecord(
            userID: adaID, category: .questionnaires, dedupeKey: "prompt:\(prompt.id!):open:1", title: "t", body: "b",
            path: "/app", dueAt: opens, expiresAt: opens.addingTimeInterval(3600), now: now)
        notification.promptID = prompt.id
        notification.status = .failed
        notification.miss = .subscriptionGone
        notification.attemptLog = NotificationAttempt.text(of: [
            NotificationAttempt(at: opens, channel: .webpush, outcome: .gone, detail: "webpush 410")
        ])
        try await notification.create(on: app.database)
        // Her answered prompt was answered carelessly.
        let answered = try #require(
            try await PromptRecord.query(on: app.database).filter(\.$patient.$id == adaID)
                .filter(\.$status == .completed).first())
        let response = ResponseRecord(
            id: UUID(), patientID: adaID, promptID: answered.id, instrumentKey: "mood-vas", instrumentVersion: 1,
            sealedAnswers: "", scores: "", openedAt: nil, startedAt: nil,
            completedAt: answered.opensAt.addingTimeInterval(60),
            receivedAt: answered.opensAt.addingTimeInterval(60))
        response.quality = #"{"flags":["fast","straightlined"],"longstring":6,"scaleItems":6,"timedItems":6}"#
        try await response.create(on: app.database)
        answered.responseID = response.id
        try await answered.save(on: app.database)
        return (console, studyID, ada, adaID, ben, benID)
    }

    @Test("the participant nothing reaches is flagged and listed first; one who does not share shows no figures")
    func flagged() async throws {
        try await withTestApp { app in
            // setup
            let (console, studyID, ada, _, ben, _) = try await world(app)

            // act
            let page = try await console.get("/console/studies/\(studyID)/monitor")
            let filtered = try await console.get("/console/studies/\(studyID)/monitor?flag=subscription_gone&days=30")
            let study = try await console.get("/console/studies/\(studyID)")

            // verify
            #expect(page.status == .ok)
            let rows = page.html.components(separatedBy: "<tr data-participant=").dropFirst()
            #expect(rows.count == 2 && rows.first?.hasPrefix("\"\(ada)\"") == true, "flagged first")
            let adaRow = try #require(rows.first)
            #expect(
                adaRow.contains("data-flag=\"subscription_gone\"") && adaRow.contains("data-flag=\"no_delivery_24h\""))
            #expect(adaRow.contains("Notifications gone") && adaRow.contains("<td>5</td>"), "five prompts opened")
            #expect(adaRow.contains("<td>1</td>\n        <td>1</td>"), "one missed in a row, one answer flagged")
            let benRow = try #require(rows.last)
            #expect(
                benRow.contains("not shared with research") && !benRow.contains("href") && !benRow.contains("data-flag")
            )
            #expect(filtered.html.contains(ada) && !filtered.html.contains("data-participant=\"\(ben)\""))
            #expect(
                study.html.lowercased().contains("/console/studies/\(studyID.lowercased())/monitor"),
                "the study's page leads to it")
        }
    }

    @Test("a participant's prompts say how each ended and why, with what each channel answered")
    func timeline() async throws {
        try await withTestApp { app in
            // setup
            let (console, studyID, _, adaID, _, benID) = try await world(app)

            // act
            let ada = try await console.get("/console/studies/\(studyID)/monitor/\(adaID)?days=7")
            let ben = try await console.get("/console/studies/\(studyID)/monitor/\(benID)")

            // verify
            #expect(ada.status == .ok)
            #expect(ada.html.contains("Missed, nothing reached them"))
            #expect(ada.html.contains("the push service said the subscription is gone"))
            #expect(ada.html.contains("webpush – gone (webpush 410)"))
            #expect(ada.html.contains("Answered") && ada.html.contains("no notification was queued"))
            #expect(
                ada.html.contains("many items answered in under a second")
                    && ada.html.contains("the same answer throughout"))
            #expect(ben.status == .notFound, "Ben does not share with research")
        }
    }

    @Test(
        "a period, flag or order the monitor does not offer is refused, naming it",
        arguments: ["days=5", "flag=lazy", "sort=age"])
    func refused(_ query: String) async throws {
        try await withTestApp { app in
            // setup
            let (console, studyID, _, _, _, _) = try await world(app)

            // act
            let page = try await console.get("/console/studies/\(studyID)/monitor?\(query)")

            // verify
            #expect(page.status == .unprocessableEntity || page.status == .badRequest, "\(query): \(page.status)")
            #expect(!page.html.contains("<table id=\"monitor\">"))
        }
    }
}
