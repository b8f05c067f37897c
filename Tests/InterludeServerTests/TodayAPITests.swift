import Foundation
import InterludeCore
import Testing
import VaporTesting

@testable import InterludeServer

@Suite("The patient's today")
struct TodayAPITests {
    typealias Today = Components.Schemas.Today
    static let iso = QuestionnaireAPITests.iso

    func today(_ patient: APIClient) async throws -> Today {
        let reply = try await patient.send(.GET, "/me/today")
        try #require(reply.status == .ok, "\(reply.text)")
        return try reply.decoded(Today.self)
    }

    func assign(_ therapist: APIClient, _ patientID: UUID, opensAt: Date, hours: Double) async throws -> String {
        let reply = try await therapist.send(
            .POST, "/patients/\(patientID.uuidString)/prompts",
            json: [
                "instrumentKey": "phq-9", "opensAt": Self.iso(opensAt),
                "closesAt": Self.iso(opensAt.addingTimeInterval(hours * 3600)),
            ])
        try #require(reply.status == .created, "\(reply.text)")
        return try #require(reply.body["id"].string)
    }

    @Test("a new account's day is empty and says it is neither a client nor a participant")
    func emptyDay() async throws {
        try await withTestApp { app in
            let (patient, _) = try await app.patient()

            let day = try await today(patient)

            #expect(day.situation == .neither)
            #expect(day.due.isEmpty && day.next == nil && day.appointment == nil && day.messages.isEmpty)
            #expect(day.unseenMessages == 0)
            #expect(day.week.count == 7 && day.week.allSatisfy { $0.planned == 0 && $0.answered == 0 })
            let monday = try #require(LocalDate(day.week[0].date))
            #expect(monday.weekday == .monday)
            #expect(day.me.patient?.paired == false)
        }
    }

    @Test(
        "a client's day holds what is due, what opens next, the next session, an unseen message's first line and the week"
    )
    func clientsDay() async throws {
        try await withTestApp { app in
            // setup: a paired patient with a questionnaire open now, one opening tomorrow, a session and a message
            let (therapist, _) = try await app.staff("therapist", "berger@praxis.example")
            let (patient, patientID) = try await app.patient()
            try await app.pair(patient, with: therapist)
            let now = app.clock.now
            let due = try await assign(therapist, patientID, opensAt: now, hours: 6)
            let later = try await assign(therapist, patientID, opensAt: now.addingTimeInterval(86_400), hours: 6)
            let start = Date(
                timeIntervalSince1970: ((now.timeIntervalSince1970 + 2 * 86_400) / 300).rounded(.down) * 300)
            let booked = try await patient.send(
                .POST, "/me/appointments", json: ScheduleAPITests.appointment("Session", at: start))
            try #require(booked.status == .created, "\(booked.text)")
            let sent = try await therapist.send(
                .POST, "/patients/\(patientID.uuidString)/interventions",
                json: ["kind": "task", "text": "\n  Take a ten-minute walk today.\nTell me how it went."])
            try #require(sent.status == .created, "\(sent.text)")

            // act
            let day = try await today(patient)

            // verify
            #expect(day.situation == .client)
            #expect(day.due.map(\.id) == [due])
            #expect(day.due.first?.title.isEmpty == false && day.due.first?.title != "phq-9")
            #expect(day.next?.id == later)
            #expect(day.appointment?.title == "Session")
            #expect(day.messages.map(\.firstLine) == ["Take a ten-minute walk today."])
            #expect(day.unseenMessages == 1)
            let zone = TimeZone(identifier: day.me.timeZone) ?? .gmt
            let todayRow = try #require(day.week.first { $0.date == LocalDate(now, in: zone).description })
            #expect(todayRow.planned == 1 && todayRow.answered == 0)

            // act: the message is opened, the questionnaire answered
            let messageID = try #require(day.messages.first?.id)
            #expect(try await patient.send(.POST, "/me/interventions/\(messageID)/seen").status == .ok)
            let answered = try await patient.send(
                .POST, "/me/responses",
                json: [
                    "id": .string(UUID().uuidString), "promptId": .string(due), "instrumentKey": "phq-9", "version": 1,
                    "answers": QuestionnaireAPITests.phqAnswers([0, 0, 0, 0, 0, 0, 0, 0, 0]),
                    "startedAt": Self.iso(now), "completedAt": Self.iso(now),
                ])
            try #require(answered.status == .created, "\(answered.text)")
            let after = try await today(patient)

            // verify
            #expect(after.due.isEmpty && after.messages.isEmpty && after.unseenMessages == 0)
            let todayAfter = try #require(after.week.first { $0.date == todayRow.date })
            #expect(todayAfter.planned == 1 && todayAfter.answered == 1)
        }
    }

    @Test("a study participant is a participant, and a client who also joins a study is both")
    func situations() async throws {
        try await withTestApp { app in
            let (researcher, _) = try await app.staff("researcher", "lab@uni.example")
            let studyID = try await StudyAPITests().createStudy(researcher, StudyAPITests.study("open"))
            let (patient, _) = try await app.patient()
            try #require(try await StudyAPITests.join(patient, studyID).status == .created)

            #expect(try await today(patient).situation == .participant)

            let (therapist, _) = try await app.staff("therapist", "berger@praxis.example")
            try await app.pair(patient, with: therapist)
            #expect(try await today(patient).situation == .both)
        }
    }

    @Test("staff have no day of a patient's to read")
    func staffRefused() async throws {
        try await withTestApp { app in
            let (therapist, _) = try await app.staff("therapist", "berger@praxis.example")
            #expect(try await therapist.send(.GET, "/me/today").status == .forbidden)
        }
    }
}
