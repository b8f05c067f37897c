import Fluent
import Foundation
import InterludeCore
import Testing
import VaporTesting

@testable import InterludeServer

/// Reinforcement messages as the person wants them: fewer, or none, and in a narrower window, inside the bounds of
/// a study that lets them choose.
@Suite("Reinforcement messages chosen by the person")
struct MessageChoiceTests {
    /// A study sending four messages a day between 09:00 and 21:00 that lets participants choose, with two of them.
    func study(_ app: TestContext, personChooses: Bool = true, tag: String = "") async throws
        -> (ada: APIClient, adaID: UUID, bea: APIClient, studyID: String)
    {
        let (researcher, researcherID) = try await app.staff("researcher", "lab\(tag)@uni.example")
        let studyID = try await StudyAPITests().createStudy(researcher, StudyAPITests.study("open"))
        let (ada, adaID) = try await app.patient("ada\(tag)@example.org")
        let (bea, _) = try await app.patient("bea\(tag)@example.org")
        for patient in [ada, bea] {
            try #require(
                try await patient.send(.POST, "/studies/\(studyID)/enrollment", json: ["consentVersion": "2026-1"])
                    .status == .created)
        }
        let owner = try #require(try await UserRecord.find(researcherID, on: app.database))
        let grant = try await StudyAccess(database: app.database, services: app.app.interlude)
            .require(.editLibrary, in: try #require(UUID(uuidString: studyID)), by: owner)
        let library = InterventionLibrary(database: app.database, services: app.app.interlude)
        try await library.addMessage([.en: "Notice one thing you value today."], in: grant)
        try await library.setPlan(
            MessagePlan(
                perDay: 4, windowStart: LocalTime("09:00")!, windowEnd: LocalTime("21:00")!,
                personChooses: personChooses), in: grant)
        return (ada, adaID, bea, studyID)
    }

    @Test(
        "a person's choice of one message between 18:00 and 20:00 is what they get; another person keeps the study's four"
    )
    func choicePlanned() async throws {
        try await withTestApp { app in
            // setup
            let (ada, adaID, bea, studyID) = try await study(app)
            let planner = MessagePlanner(database: app.database, services: app.app.interlude)
            _ = try await planner.run(now: app.clock.now)
            let plannedBefore = try await InterventionRecord.query(on: app.database).filter(\.$patient.$id == adaID)
                .count()

            // act
            let offered = try await ada.send(.GET, "/me/message-plans").decoded(
                [Components.Schemas.MessagePlanOffer].self)
            let chosen = try await ada.send(
                .PUT, "/me/message-plans/\(studyID)", json: ["perDay": 1, "windowStart": "18:00", "windowEnd": "20:00"])
            let afterChoice = try await InterventionRecord.query(on: app.database).filter(\.$patient.$id == adaID)
                .filter(\.$deliverAt > app.clock.now).count()
            _ = try await planner.run(now: app.clock.now)
            let adas = try await InterventionRecord.query(on: app.database).filter(\.$patient.$id == adaID).all()
            let beas = try await bea.send(.GET, "/me/message-plans").decoded([Components.Schemas.MessagePlanOffer].self)

            // verify
            #expect(plannedBefore > 0)
            #expect(offered.map(\.perDay) == [4] && offered[0].personChooses && offered[0].choice == nil)
            #expect(
                chosen.status == .ok && chosen.body["choice"]["perDay"].int == 1
                    && chosen.body["choice"]["windowStart"].string == "18:00")
            #expect(afterChoice == 0, "what was planned by the study's plan went")
            let zone = TimeZone(identifier: "Europe/Vienna")!
            let days = Dictionary(grouping: adas.filter { $0.deliverAt > app.clock.now }) {
                LocalDate($0.deliverAt, in: zone)
            }
            #expect(!days.isEmpty && days.values.allSatisfy { $0.count <= 1 })
            #expect(
                adas.filter { $0.deliverAt > app.clock.now }.allSatisfy {
                    let local = LocalDateTime($0.deliverAt, in: zone).time
                    return local >= LocalTime("18:00")! && local <= LocalTime("20:00")!
                })
            #expect(beas[0].choice == nil)
        }
    }

    @Test(
        "a choice outside the study's bounds is named; a study that does not let people choose refuses; none at all plans nothing"
    )
    func refusals() async throws {
        try await withTestApp { app in
            // setup
            let (ada, adaID, _, studyID) = try await study(app)
            let (other, _, _, fixedStudy) = try await study(app, personChooses: false, tag: "2")

            // act
            let outside = try await ada.send(
                .PUT, "/me/message-plans/\(studyID)", json: ["perDay": 5, "windowStart": "07:00", "windowEnd": "22:00"])
            let notAllowed = try await other.send(
                .PUT, "/me/message-plans/\(fixedStudy)",
                json: ["perDay": 1, "windowStart": "10:00", "windowEnd": "11:00"])
            let notMine = try await ada.send(
                .PUT, "/me/message-plans/\(fixedStudy)",
                json: ["perDay": 1, "windowStart": "10:00", "windowEnd": "11:00"])
            let none = try await ada.send(
                .PUT, "/me/message-plans/\(studyID)", json: ["perDay": 0, "windowStart": "09:00", "windowEnd": "21:00"])
            _ = try await MessagePlanner(database: app.database, services: app.app.interlude).run(now: app.clock.now)
            let planned = try await InterventionRecord.query(on: app.database).filter(\.$patient.$id == adaID).count()
            let reset = try await ada.send(.DELETE, "/me/message-plans/\(studyID)")
            let offers = try await ada.send(.GET, "/me/message-plans").decoded(
                [Components.Schemas.MessagePlanOffer].self)

            // verify
            #expect(
                outside.status == .unprocessableEntity
                    && Set(outside.body.problemFields) == ["perDay", "windowStart", "windowEnd"])
            #expect(notAllowed.status == .forbidden)
            #expect(notMine.status == .notFound)
            #expect(none.status == .ok && planned == 0)
            #expect(reset.status == .noContent && offers[0].choice == nil)
            #expect(try await app.count("message_choices") == 0)
        }
    }
}
