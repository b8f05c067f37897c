import Fluent
import Foundation
import InterludeCore
import Testing

@testable import InterludeServer

@Suite("My results against all participants")
struct ResultComparisonTests {
    /// A study showing comparison, `people` participants answering the daily questionnaire: the first with
    /// stress 8 and 12, the others once each with 20, 30, … Answers the study, the participants and the researcher.
    func world(_ app: TestContext, people: Int, comparison: String = "always") async throws
        -> (study: ConsentVersionTests.Study, patients: [APIClient])
    {
        let (researcher, _) = try await app.staff("researcher", "lab@uni.example")
        let studyID = try await StudyAPITests().createStudy(
            researcher, StudyAPITests.study("open").merging(["comparison": .string(comparison)]))
        let study = ConsentVersionTests.Study(researcher: researcher, id: studyID)
        var patients: [APIClient] = []
        for index in 0..<people {
            let (patient, patientID) = try await app.patient("p\(index)@example.org")
            try #require(try await StudyAPITests.join(patient, studyID).status == .created)
            for stress in index == 0 ? [8, 12] : [10 + 10 * index] {
                var daily = ConsentVersionTests.Answered.daily
                daily.answers = daily.answers.merging(["stress": .int(stress)])
                let reply = try await ConsentVersionTests().answer(patient, patientID, in: study, answering: daily, app)
                try #require(reply.status == .created, "\(reply.text)")
                app.clock.advance(by: 60)
            }
            patients.append(patient)
        }
        return (study, patients)
    }

    func stress(_ reply: APIClient.Reply) throws -> Components.Schemas.ResultComparison? {
        try reply.decoded(Components.Schemas.ResultComparisons.self).items.first { $0.scoreId == "stress" }
    }

    @Test("with ten people the person's mean stands against the median and middle half, as calculated by hand")
    func tenPeople() async throws {
        try await withTestApp { app in
            // setup: means 10 (8 and 12), 20, …, 100 — median 55, quartiles 32.5 and 77.5
            let (_, patients) = try await world(app, people: 10)

            // act
            let mine = try #require(try stress(try await patients[0].send(.GET, "/me/results/comparison")))

            // verify
            #expect(mine.personMean == 10)
            #expect(mine.personCount == 2)
            #expect(mine.median == 55)
            #expect(mine.lowerQuartile == 32.5)
            #expect(mine.upperQuartile == 77.5)
            #expect(mine.contributors == 10)
            #expect(mine.withheld == nil)
            #expect(mine.title == "Track Your Stress: daily")
        }
    }

    @Test("with nine people the cohort is withheld and the person still sees their own mean")
    func ninePeople() async throws {
        try await withTestApp { app in
            // setup
            let (_, patients) = try await world(app, people: 9)

            // act
            let mine = try #require(try stress(try await patients[0].send(.GET, "/me/results/comparison")))

            // verify
            #expect(mine.personMean == 10)
            #expect(mine.withheld == .tooFew)
            #expect(mine.median == nil && mine.lowerQuartile == nil && mine.contributors == nil)
        }
    }

    @Test(
        "the person's switch hides it; a study showing it after its end withholds it while it runs; off shows nothing")
    func switchesAndStudyOptions() async throws {
        try await withTestApp { app in
            // setup
            let (study, patients) = try await world(app, people: 10, comparison: "afterEnd")

            // act
            let running = try await patients[0].send(.GET, "/me/results/comparison")
            let hidden = try await patients[1].send(.PATCH, "/me", json: ["hideComparison": true])
            let hiddenView = try await patients[1].send(.GET, "/me/results/comparison")
            let closed = try await study.researcher.send(
                .PUT, "/studies/\(study.id)",
                json: StudyAPITests.study("open", status: "closed").merging(["comparison": "afterEnd"]))
            let afterEnd = try await patients[0].send(.GET, "/me/results/comparison")
            let off = try await study.researcher.send(
                .PUT, "/studies/\(study.id)",
                json: StudyAPITests.study("open", status: "closed").merging(["comparison": "off"]))
            let none = try await patients[0].send(.GET, "/me/results/comparison")
            let badOption = try await study.researcher.send(
                .PUT, "/studies/\(study.id)", json: StudyAPITests.study("open").merging(["comparison": "rank"]))

            // verify
            #expect(try stress(running)?.withheld == .untilEnd)
            #expect(try stress(running)?.median == nil)
            #expect(hidden.body["patient"]["hidesComparison"].bool == true)
            #expect(try hiddenView.decoded(Components.Schemas.ResultComparisons.self).hidden)
            #expect(try hiddenView.decoded(Components.Schemas.ResultComparisons.self).items.isEmpty)
            #expect(closed.status == .ok, "\(closed.text)")
            #expect(try stress(afterEnd)?.median == 55)
            #expect(off.status == .ok)
            #expect(try none.decoded(Components.Schemas.ResultComparisons.self).items.isEmpty)
            #expect(badOption.status == .badRequest || badOption.status == .unprocessableEntity)
        }
    }

    @Test(
        "my results give each score and numeric item over time with its scale, the answers and missed prompts of the period"
    )
    func results() async throws {
        try await withTestApp { app in
            // setup: two daily answers (stress 8 and 12) and one prompt that closed unanswered
            let (_, patients) = try await world(app, people: 1)
            let patientID = try #require(
                try await UserRecord.query(on: app.database).filter(\.$role == .patient).first()?.id)
            let missed = PromptRecord(
                patientID: patientID, studyID: nil, assignedBy: nil, instrumentKey: "tys-daily", instrumentVersion: 2,
                opensAt: app.clock.now.addingTimeInterval(-7200), closesAt: app.clock.now.addingTimeInterval(-3600),
                source: .manual,
                now: app.clock.now)
            try await missed.create(on: app.database)
            let today = LocalDate(app.clock.now, in: .gmt).description

            // act
            let all = try await patients[0].send(.GET, "/me/results").decoded(
                [Components.Schemas.InstrumentResults].self)
            let before = try await patients[0].send(.GET, "/me/results?to=2020-01-01").decoded(
                [Components.Schemas.InstrumentResults].self)
            let todayOnly = try await patients[0].send(.GET, "/me/results?from=\(today)&to=\(today)")
            let refused = try await patients[0].send(.GET, "/me/results?from=yesterday")
            let backwards = try await patients[0].send(.GET, "/me/results?from=2026-03-02&to=2026-03-01")
            let farFuture = try await patients[0].send(.GET, "/me/results?from=9999-12-31")
            let farPast = try await patients[0].send(.GET, "/me/results?from=0001-01-01&to=0001-01-01")

            // verify
            let daily = try #require(all.first { $0.instrumentKey == "tys-daily" })
            #expect(daily.answered == 2)
            #expect(daily.missed == 1)
            #expect(daily.momentary == false)
            #expect(daily.scores.first { $0.id == "stress" }?.points.map(\.value) == [8, 12])
            #expect(daily.scores.first { $0.id == "stress" }?.points.first?.band?.level == "low")
            #expect(daily.items.first { $0.id == "control" }?.points.map(\.value) == [40, 40])
            let stress = try #require(daily.scores.first { $0.id == "stress" })
            #expect(stress.low == 0 && stress.high == 100, "the chart's axis spans the slider's scale")
            #expect(stress.yesNo == false)
            #expect(daily.scores.first { $0.id == "valence" }.map { [$0.low, $0.high] } == [1, 9])
            #expect(before.isEmpty)
            #expect(todayOnly.status == .ok)
            #expect(refused.body.problemFields == ["from"])
            #expect(backwards.body.problemFields == ["to"])
            #expect(farFuture.status == .unprocessableEntity && farFuture.body.problemFields == ["from"])
            #expect(farPast.status == .ok, "a period long before anything answered is empty, not an error")
        }
    }

    @Test("the study form sets when comparison is shown; an option it does not offer is refused and nothing changes")
    func studyForm() async throws {
        try await withTestApp { app in
            // setup
            let (study, _) = try await world(app, people: 1, comparison: "off")
            let console = ConsoleBrowser(app)
            _ = try await console.signIn("lab@uni.example")
            let path = "/console/studies/\(study.id)/edit"
            let fields = [
                ("title", "Stress study"), ("description", ""), ("consentText", "I agree to take part."),
                ("consentVersion", "2026-1"),
                ("joinMode", "open"), ("status", "running"),
            ]

            // act
            let before = try await console.get(path)
            let set = try await console.post(path, fields + [("comparison", "afterEnd")])
            let after = try await console.get(path)
            let refused = try await console.post(path, fields + [("comparison", "rank")])

            // verify
            #expect(before.html.contains("<option value=\"off\" selected>"))
            #expect(set.status == .seeOther)
            #expect(after.html.contains("<option value=\"afterEnd\" selected>"))
            #expect(refused.status == .unprocessableEntity || refused.status == .badRequest)
            #expect(try await StudyRecord.find(UUID(uuidString: study.id), on: app.database)?.comparison == .afterEnd)
        }
    }
}
