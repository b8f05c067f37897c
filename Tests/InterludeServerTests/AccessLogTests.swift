import Fluent
import Foundation
import Testing
import VaporTesting

@testable import InterludeServer

@Suite("Who looked at my data")
struct AccessLogTests {
    typealias Log = Components.Schemas.AccessLog

    @Test(
        "a therapist's read shows with the therapist's name, a researcher's as the study's research team; no email, not another's"
    )
    func showsReads() async throws {
        try await withTestApp { app in
            // setup
            let (therapist, _) = try await app.staff("therapist", "berger@praxis.example", name: "Dr. Anna Berger")
            let (researcher, _) = try await app.staff("researcher", "lab@uni.example")
            let (unnamed, _) = try await app.staff("therapist", "nameless@praxis.example")
            let (ada, adaID) = try await app.patient("ada@example.org", shareWithResearch: true)
            let (bob, bobID) = try await app.patient("bob@example.org")
            try await app.pair(ada, with: therapist)
            try await app.pair(bob, with: unnamed)
            let studyID = try await StudyAPITests().createStudy(researcher, StudyAPITests.study("open"))
            try #require(try await StudyAPITests.join(ada, studyID).status == .created)
            let empty = try await ada.send(.GET, "/me/access-log").decoded(Log.self)

            // act
            _ = try await therapist.send(.GET, "/patients/\(adaID.uuidString)/responses")
            app.clock.advance(by: 60)
            _ = try await researcher.send(.GET, "/studies/\(studyID)/enrollments")
            _ = try await unnamed.send(.GET, "/patients/\(bobID.uuidString)/responses")
            let reply = try await ada.send(.GET, "/me/access-log")
            let others = try await bob.send(.GET, "/me/access-log").decoded(Log.self)

            // verify
            #expect(empty.entries.isEmpty)
            let log = try reply.decoded(Log.self)
            let research = try #require(log.entries.first { $0.actorRole == .researcher })
            #expect(research.actor == "Research team of the study “Stress study (open)”")
            #expect(research.studyId == studyID.lowercased())
            let read = try #require(log.entries.first { $0.action == "responses.read" })
            #expect(read.actor == "Dr. Anna Berger, therapist")
            #expect(read.activity == "Viewed answers")
            #expect(read.occurredAt == app.clock.now.addingTimeInterval(-60))
            #expect(!reply.text.contains("@"))
            #expect(!others.entries.isEmpty)
            #expect(others.entries.allSatisfy { $0.actor == "A therapist" && $0.actorRole == .therapist })
        }
    }

    @Test("the log pages with before; a malformed cursor or limit is refused by field")
    func pages() async throws {
        try await withTestApp { app in
            // setup
            let (therapist, _) = try await app.staff("therapist", "berger@praxis.example", name: "Dr. Anna Berger")
            let (ada, adaID) = try await app.patient("ada@example.org")
            try await app.pair(ada, with: therapist)
            for _ in 0..<3 {
                _ = try await therapist.send(.GET, "/patients/\(adaID.uuidString)")
                app.clock.advance(by: 60)
            }
            let total = try await ada.send(.GET, "/me/access-log").decoded(Log.self).entries.count

            // act
            let first = try await ada.send(.GET, "/me/access-log?limit=2").decoded(Log.self)
            let next = try #require(first.next)
            let second = try await ada.send(.GET, "/me/access-log?limit=2&before=\(next)").decoded(Log.self)
            let badCursor = try await ada.send(.GET, "/me/access-log?before=yesterday")
            let badLimit = try await ada.send(.GET, "/me/access-log?limit=500")

            // verify
            #expect(total >= 3)
            #expect(first.entries.count == 2)
            #expect(Set(first.entries.map(\.id)).isDisjoint(with: second.entries.map(\.id)))
            #expect(first.entries.count + second.entries.count == min(total, 4))
            #expect(first.entries.map(\.occurredAt) == first.entries.map(\.occurredAt).sorted(by: >))
            #expect(badCursor.status == .unprocessableEntity && badCursor.body.problemFields == ["before"])
            #expect(badLimit.status.code / 100 == 4)
        }
    }
}
