import Fluent
import Foundation
import InterludeCore
import SQLKit
import Testing
import VaporTesting

@testable import InterludeServer

/// Why an alert was raised ("item phq9_9 = 2") and what a questionnaire scored say how a person is doing, so the
/// database holds them sealed, as it holds answers; the people who may read them see them as before.
@Suite("Health data at rest")
struct HealthDataAtRestTests {
    /// The stored text of `column` in every row of `table`.
    static func stored(_ column: String, of table: String, _ app: TestContext) async throws -> [String] {
        try await app.sql.select().column(column).from(table).all().map {
            try $0.decode(column: column, as: String.self)
        }
    }

    /// A paired patient who answered PHQ-9 with item 9 at 2, which raises the crisis alert.
    func crisis(_ app: TestContext) async throws -> APIClient {
        let (therapist, patient, patientID) = try await InterventionTests().paired(app)
        _ = try await InterventionTests().answer(
            app, therapist: therapist, patient: patient, patientID: patientID,
            answers: QuestionnaireAPITests.phqAnswers([1, 1, 0, 0, 0, 0, 0, 0, 2]))
        return therapist
    }

    @Test("alert and firing reasons and scores are stored sealed, and read in clear by the therapist")
    func sealed() async throws {
        try await withTestApp { app in
            // setup / act
            let therapist = try await crisis(app)
            // verify
            let stored =
                try await Self.stored("reason", of: "alerts", app) + Self.stored("reason", of: "rule_firings", app)
                + Self.stored("scores", of: "responses", app)
            #expect(stored.count == 3)
            #expect(
                stored.allSatisfy { $0.hasPrefix(FieldCipher.prefix) && !$0.contains("phq9") && !$0.contains("total") })
            let alert = try await therapist.send(.GET, "/alerts").body[0]
            #expect(alert["reason"].string?.contains("item phq9_9 = 2") == true)
        }
    }

    @Test("answers are kept as JSON keyed by item id in sorted order, scores as JSON, both read back as sent")
    func keptForm() async throws {
        try await withTestApp { app in
            // setup / act
            let therapist = try await crisis(app)
            let cipher = app.app.interlude.cipher
            // verify
            let answers = try cipher.open(try #require(try await Self.stored("answers", of: "responses", app).first))
            let ids = answers.matches(of: /"(phq9_[0-9]+)":/).map { String($0.1) }
            #expect(ids.count == 9)
            #expect(ids == ids.sorted())
            let opened = try JSONDecoder().decode(Answers.self, from: Data(answers.utf8))
            #expect(opened["phq9_9"] == .text("2") && opened["phq9_3"] == .text("0") && opened.count == 9)
            let scores = try cipher.open(try #require(try await Self.stored("scores", of: "responses", app).first))
            let total = try #require(try JSONDecoder().decode([ScoreResult].self, from: Data(scores.utf8)).first)
            let shown = try await therapist.send(.GET, "/patients/\(try await firstPatient(app))/responses").body[0][
                "scores"][0]
            #expect(total.value == 4 && shown["value"].int == 4)
            #expect(total.band?.level == shown["band"]["level"].string)
        }
    }

    @Test("rows an older installation stored in clear are sealed by the migration, once, and read as before")
    func legacyRowsSealed() async throws {
        try await withTestApp { app in
            // setup: the rows as an older installation wrote them
            let therapist = try await crisis(app)
            let responsesPath = "/patients/\(try await firstPatient(app))/responses"
            let before = try await therapist.send(.GET, "/alerts").body[0]["reason"].string
            let scoresBefore = try await therapist.send(.GET, responsesPath).body[0]["scores"]
            for (table, column) in UpdateSealHealthData.columns {
                for row in try await app.sql.select().column("id").column(column).from(table).all() {
                    let plain = try app.app.interlude.cipher.open(try row.decode(column: column, as: String.self))
                    try await app.sql.update(table).set(column, to: SQLBind(plain))
                        .where("id", .equal, SQLBind(try row.decode(column: "id", as: UUID.self))).run()
                }
            }
            #expect(try await Self.stored("reason", of: "alerts", app).first?.contains("phq9_9") == true)
            // act: the migration, twice
            let migration = UpdateSealHealthData(cipher: app.app.interlude.cipher)
            try await migration.prepare(on: app.database)
            let sealedOnce = try await Self.stored("reason", of: "rule_firings", app)
            try await migration.prepare(on: app.database)
            // verify
            #expect(try await Self.stored("reason", of: "rule_firings", app) == sealedOnce)
            for (table, column) in UpdateSealHealthData.columns {
                #expect(
                    try await Self.stored(column, of: table, app).allSatisfy { $0.hasPrefix(FieldCipher.prefix) },
                    "\(table)")
            }
            #expect(try await therapist.send(.GET, "/alerts").body[0]["reason"].string == before)
            let scoresAfter = try await therapist.send(.GET, responsesPath).body[0]["scores"]
            #expect(scoresAfter[0]["value"].int == scoresBefore[0]["value"].int)
            #expect(scoresAfter[0]["band"]["level"].string == scoresBefore[0]["band"]["level"].string)
            #expect(scoresAfter[0]["value"].int != nil)
        }
    }

    private func firstPatient(_ app: TestContext) async throws -> String {
        try #require(try await ResponseRecord.query(on: app.database).first()).$patient.id.uuidString
    }
}
