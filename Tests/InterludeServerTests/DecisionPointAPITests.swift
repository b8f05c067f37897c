import Fluent
import Foundation
import InterludeCore
import Testing
import VaporTesting

@testable import InterludeServer

/// Micro-randomised decision points as a study runs them: the plan set through the API, each participant's points
/// decided by the planner's job as they come, what they deliver, and decision_points.csv.
@Suite("Micro-randomised decision points in a running study")
struct DecisionPointAPITests {
    static let plan: JSONValue = [
        "times": ["09:00", "12:00", "15:00", "18:00", "21:00"], "probability": 0.6,
        "options": [
            ["kind": "message", "texts": ["en": "Take a breath.", "de": "Atme durch."]],
            ["kind": "prompt", "instrumentKey": "mood-vas", "openMinutes": 60],
        ],
        "outcomeMinutes": 120, "outcome": ["instrumentKey": "mood-vas", "score": "mood"],
    ]

    func run(_ app: TestContext) async throws -> Int {
        try await DecisionPointService(database: app.database, services: app.app.interlude).run()
    }

    func points(_ app: TestContext, of patient: UUID) async throws -> [DecisionPointRecord] {
        try await DecisionPointRecord.query(on: app.database).filter(\.$patient.$id == patient).sort(\.$at).all()
    }

    @Test(
        "a researcher sets, reads and removes the plan; a broken one is refused naming each field, and nothing changes")
    func setsPlan() async throws {
        try await withTestApp { app in
            // setup
            let (researcher, _) = try await app.staff("researcher", "lab@uni.example")
            let (other, _) = try await app.staff("researcher", "other@uni.example")
            let study = try await StudyAPITests().createStudy(researcher, StudyAPITests.study("open"))
            let (patient, _) = try await app.patient()
            try #require(try await StudyAPITests.join(patient, study).status == .created)
            // act
            let set = try await researcher.send(.PUT, "/studies/\(study)/decision-plan", json: Self.plan)
            let broken = try await researcher.send(
                .PUT, "/studies/\(study)/decision-plan",
                json: [
                    "times": ["09:00", "25:00"], "probability": 0.5, "outcomeMinutes": 120,
                    "options": [
                        ["kind": "prompt", "instrumentKey": "mood-vas"], ["kind": "message", "texts": ["de": ""]],
                    ],
                ])
            let unlikely = try await researcher.send(
                .PUT, "/studies/\(study)/decision-plan", json: Self.plan.merging(["probability": 1.5]))
            let unknown = try await researcher.send(
                .PUT, "/studies/\(study)/decision-plan",
                json: Self.plan.merging(["options": [["kind": "prompt", "instrumentKey": "nope", "openMinutes": 60]]]))
            let read = try await researcher.send(.GET, "/studies/\(study)/decision-plan")
            let byPatient = try await patient.send(.PUT, "/studies/\(study)/decision-plan", json: Self.plan)
            let byStranger = try await other.send(.GET, "/studies/\(study)/decision-plan")
            let removed = try await researcher.send(.DELETE, "/studies/\(study)/decision-plan")
            let gone = try await researcher.send(.GET, "/studies/\(study)/decision-plan")
            // verify
            #expect(set.status == .ok, "\(set.text)")
            #expect(broken.status == .unprocessableEntity, "\(broken.text)")
            #expect(
                try StudyAPITests.fields(broken) == ["times.1", "options.0.openMinutes", "options.1.texts"],
                "\(broken.text)")
            #expect(unlikely.status == .unprocessableEntity)
            #expect(try StudyAPITests.fields(unlikely) == ["probability"])
            #expect(unknown.status == .unprocessableEntity)
            #expect(try StudyAPITests.fields(unknown) == ["options.0.instrumentKey"])
            #expect(read.status == .ok)
            #expect(read.body["times"].array.map(\.string) == ["09:00", "12:00", "15:00", "18:00", "21:00"])
            #expect(read.body["options"].array.count == 2 && read.body["outcome"]["score"].string == "mood")
            #expect(byPatient.status == .forbidden)
            #expect(byStranger.status == .notFound)
            #expect(removed.status == .noContent && gone.status == .notFound)
            let events = try await AuditEventRecord.query(on: app.database).filter(\.$action == "plan.changed").all()
            #expect(events.count == 2)
        }
    }

    @Test(
        "50 participants, 5 points a day for 42 days at 0.6: decision_points.csv's assignment rate lies in the binomial 99 % interval, every logged chance is 0.6"
    )
    func simulatedStudy() async throws {
        try await withTestApp { app in
            // setup: the planner's job runs every 24 hours from 09:00 on the first day, and 12 hours after the last
            let (researcher, _) = try await app.staff("researcher", "lab@uni.example")
            let study = try await StudyAPITests().createStudy(researcher, StudyAPITests.study("open"))
            let plan = Self.plan.merging(["options": [["kind": "message", "texts": ["en": "Take a breath."]]]])
            try #require(try await researcher.send(.PUT, "/studies/\(study)/decision-plan", json: plan).status == .ok)
            for index in 0..<50 {
                let (patient, _) = try await app.patient("p\(index)@example.org")
                try #require(try await StudyAPITests.join(patient, study).status == .created)
            }
            // act
            var runs = [app.clock.now]
            var decided = try await run(app)
            for _ in 1...41 {
                app.clock.advance(by: 86_400)
                runs.append(app.clock.now)
                decided += try await run(app)
            }
            app.clock.advance(by: 12 * 3600)
            runs.append(app.clock.now)
            decided += try await run(app)
            decided += try await run(app)
            // Six weeks on, the researcher signs in again.
            let again = try await app.signIn("lab@uni.example")
            let files = try await ExportWorld.export(app, researcher: again, studyID: study).files
            // verify
            #expect(decided == 10_500)
            let rows = try CSVTable(files["decision_points.csv"]).rows
            #expect(rows.count == 10_500)
            #expect(rows.allSatisfy { $0["available"] == "1" && $0["probability"] == "0.6" })
            let assigned = rows.filter { $0["assigned"] == "1" }.count
            // Binomial(10 500, 0.6): mean 6 300, standard deviation about 50.2; 99 % within ±129.
            #expect((6_171...6_429).contains(assigned), "\(assigned)")
            #expect(Set(rows.map { $0["pseudonym"] }).count == 50)
            // The job came to some points on time (09:00 in winter, the last 21:00), to the others up to a day late
            // (all of them an hour late in summer time): an assigned point delivered exactly when it was on time.
            let logged = try await DecisionPointRecord.query(on: app.database).all()
            let onTime = { (point: DecisionPointRecord) in
                runs.contains { $0 >= point.at && $0.timeIntervalSince(point.at) <= 30 * 60 }
            }
            #expect(logged.allSatisfy { ($0.assigned == true && onTime($0)) == ($0.interventionID != nil) })
            let delivered = rows.filter { $0["delivered"] == "1" }
            #expect(delivered.count == logged.filter { $0.interventionID != nil }.count && !delivered.isEmpty)
            #expect(delivered.allSatisfy { $0["assigned"] == "1" && $0["option_kind"] == "message" })
            let messages = try await InterventionRecord.query(on: app.database).filter(\.$origin == .messagePlan)
                .count()
            #expect(messages == delivered.count)
        }
    }

    @Test(
        "a point decided in time delivers its option; in quiet hours nothing is drawn, late nothing arrives, and a control arm has no points"
    )
    func delivery() async throws {
        try await withTestApp { app in
            // setup: Ada in the arm that receives interventions, Ben in the control arm, a message always at 09:30
            let (researcher, _) = try await app.staff("researcher", "lab@uni.example")
            let study = try await StudyAPITests().createStudy(researcher, ControlArmTests.design)
            let plan = Self.plan.merging([
                "times": ["09:30"], "probability": 1,
                "options": [["kind": "message", "texts": ["en": "Take a breath.", "de": "Atme durch."]]],
            ])
            try #require(try await researcher.send(.PUT, "/studies/\(study)/decision-plan", json: plan).status == .ok)
            let (ada, adaID) = try await app.patient("ada@example.org")
            let (ben, benID) = try await app.patient("ben@example.org")
            try #require(try await StudyAPITests.join(ada, study).status == .created)
            try #require(try await StudyAPITests.join(ben, study).status == .created)
            // act: 09:31 on the first day
            app.clock.advance(by: 31 * 60)
            _ = try await run(app)
            let first = try await points(app, of: adaID)
            let received = try await ada.send(.GET, "/me/interventions")
            // quiet from 09:00 to 10:00 on the second day
            let quiet = try await ada.send(
                .PUT, "/me/notification-preferences",
                json: [
                    "questionnaires": true, "interventions": true, "appointments": true, "messages": true,
                    "quietHours": ["start": "09:00", "end": "10:00"],
                ])
            try #require(quiet.status == .ok, "\(quiet.text)")
            app.clock.advance(by: 86_400)
            _ = try await run(app)
            // the third day's point found at noon, the job not having run since
            try #require(
                try await ada.send(
                    .PUT, "/me/notification-preferences",
                    json: ["questionnaires": true, "interventions": true, "appointments": true, "messages": true]
                ).status == .ok)
            app.clock.advance(by: 86_400 + 2.5 * 3600)
            _ = try await run(app)
            // verify
            let all = try await points(app, of: adaID)
            #expect(first.count == 1 && first[0].assigned == true && first[0].interventionID != nil)
            #expect(received.body.array.map { $0["text"].string } == ["Take a breath."])
            #expect(all.map(\.available) == [true, false, true])
            #expect(all[1].probability == nil && all[1].assigned == nil && all[1].interventionID == nil)
            #expect(all[2].assigned == true && all[2].interventionID == nil)
            #expect(try await points(app, of: benID).isEmpty)
            #expect(try await InterventionRecord.query(on: app.database).count() == 1)
            _ = ben
        }
    }

    @Test(
        "a questionnaire as the option opens a prompt for its minutes; its answer is the point's outcome in the export")
    func promptAndOutcome() async throws {
        try await withTestApp { app in
            // setup
            let (researcher, _) = try await app.staff("researcher", "lab@uni.example")
            let study = try await StudyAPITests().createStudy(researcher, StudyAPITests.study("open"))
            let plan = Self.plan.merging([
                "times": ["09:30"], "probability": 1,
                "options": [["kind": "prompt", "instrumentKey": "mood-vas", "openMinutes": 60]],
            ])
            try #require(try await researcher.send(.PUT, "/studies/\(study)/decision-plan", json: plan).status == .ok)
            let (ada, adaID) = try await app.patient("ada@example.org")
            try #require(try await StudyAPITests.join(ada, study).status == .created)
            app.clock.advance(by: 31 * 60)
            // act
            _ = try await run(app)
            let prompt = try #require(
                try await PromptRecord.query(on: app.database).filter(\.$patient.$id == adaID).first())
            app.clock.advance(by: 10 * 60)
            let answered = try await ada.send(
                .POST, "/me/responses",
                json: [
                    "id": .string(UUID().uuidString), "promptId": .string(try prompt.requireID().uuidString),
                    "instrumentKey": "mood-vas", "version": 1, "answers": ["mood": 70],
                    "startedAt": QuestionnaireAPITests.iso(app.clock.now.addingTimeInterval(-60)),
                    "completedAt": QuestionnaireAPITests.iso(app.clock.now),
                ])
            try #require(answered.status == .created, "\(answered.text)")
            let files = try await ExportWorld.export(app, researcher: researcher, studyID: study).files
            // verify
            #expect(prompt.source == .decisionPoint)
            #expect(prompt.closesAt.timeIntervalSince(prompt.opensAt) == 3600)
            let rows = try CSVTable(files["decision_points.csv"]).rows
            #expect(rows.count == 1)
            #expect(rows.first?["option_kind"] == "prompt" && rows.first?["delivered"] == "1")
            #expect(rows.first?["outcome_n"] == "1" && rows.first?["outcome_values"] == "70")
            #expect(rows.first?["seed"] == "")
            let prompts = try CSVTable(files["prompts.csv"]).rows
            #expect(prompts.map { $0["source"] } == ["decision_point"])
        }
    }

    @Test("a person's copy holds their decision points; leaving the study with their data erases them")
    func erasure() async throws {
        try await withTestApp { app in
            // setup
            let (researcher, _) = try await app.staff("researcher", "lab@uni.example")
            let study = try await StudyAPITests().createStudy(researcher, StudyAPITests.study("open"))
            try #require(
                try await researcher.send(.PUT, "/studies/\(study)/decision-plan", json: Self.plan).status == .ok)
            let (ada, adaID) = try await app.patient("ada@example.org")
            try #require(try await StudyAPITests.join(ada, study).status == .created)
            app.clock.advance(by: 86_400)
            _ = try await run(app)
            let user = try #require(try await UserRecord.find(adaID, on: app.database))
            let copy = try await PersonalData.collect(of: user, on: app.database, services: app.app.interlude)
            // act
            let left = try await ada.send(.DELETE, "/studies/\(study)/enrollment?erase=true")
            // verify
            #expect(copy.tables[DecisionPointRecord.schema]?.count == 5)
            #expect(left.status == .noContent || left.status == .ok, "\(left.text)")
            #expect(try await points(app, of: adaID).isEmpty)
        }
    }
}
