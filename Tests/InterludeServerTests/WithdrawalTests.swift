import Fluent
import Foundation
import SQLKit
import Testing
import VaporTesting

@testable import InterludeServer

@Suite("Leaving a study: keep or delete what was given")
struct WithdrawalTests {
    /// Ada with a full account (practice, prompts, alerts, interventions) who also answers in a research study that
    /// Ben takes part in too.
    struct World {
        let account: ErasureTests.FullAccount
        let adaID: String
        let benID: String
        let studyID: String
        let ben: APIClient
    }

    func world(_ app: TestContext) async throws -> World {
        let account = try await ErasureTests().fullAccount(app)
        let adaID = try #require(account.identifiers.first)
        let (researcher, _) = try await app.staff("researcher", "study@uni.example")
        let studyID = try await StudyAPITests().createStudy(researcher, StudyAPITests.study("open"))
        let (ben, benID) = try await app.patient("ben@example.org")
        for client in [account.patient, ben] {
            try #require(try await StudyAPITests.join(client, studyID).status == .created)
        }
        for (client, patient) in [(account.patient, try #require(UUID(uuidString: adaID))), (ben, benID)] {
            let prompt = PromptRecord(
                patientID: patient, studyID: UUID(uuidString: studyID), assignedBy: nil, instrumentKey: "mood-vas",
                instrumentVersion: 1,
                opensAt: app.clock.now, closesAt: app.clock.now.addingTimeInterval(3600), source: .schedule,
                now: app.clock.now)
            try await prompt.create(on: app.database)
            let reply = try await client.send(
                .POST, "/me/responses",
                json: [
                    "id": .string(UUID().uuidString), "promptId": .string(try prompt.requireID().uuidString),
                    "instrumentKey": "mood-vas",
                    "version": 1, "answers": ["mood": 30], "completedAt": QuestionnaireAPITests.iso(app.clock.now),
                ])
            try #require(reply.status == .created, "\(reply.text)")
        }
        _ = try await researcher.send(.GET, "/studies/\(studyID)/enrollments")
        return World(
            account: account, adaID: adaID, benID: benID.uuidString.lowercased(), studyID: studyID.lowercased(),
            ben: ben)
    }

    /// The ids of rows (in any table but the audit log, whose rows stay without naming either) whose text names both
    /// `person` and the study, with the responses to the study's prompts, and every row's text.
    func rows(naming person: String, and study: String, _ app: TestContext) async throws -> (
        ids: Set<String>, all: [String: [String]]
    ) {
        var ids: Set<String> = []
        var all: [String: [String]] = [:]
        for table in try await ErasureTests.tables(app) {
            let rows = try await ErasureTests.rows(of: table, app)
            all[table] = rows
            for row in rows where table != AuditEventRecord.schema && row.contains(person) && row.contains(study) {
                // The id column comes first in every table.
                if let id = row.firstMatch(of: /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/) {
                    ids.insert(String(id.output))
                }
            }
        }
        let responses = try await app.sql.raw(
            "SELECT r.id FROM responses r JOIN prompts p ON p.id = r.prompt_id WHERE p.study_id = \(bind: UUID(uuidString: study)!) AND r.patient_id = \(bind: UUID(uuidString: person)!)"
        ).all()
        for row in responses { ids.insert(try row.decode(column: "id", as: UUID.self).uuidString.lowercased()) }
        return (ids, all)
    }

    @Test("stop and delete: no row of the study names the person any more, no id of it is left, the rest stays")
    func eraseStudyData() async throws {
        try await withTestApp { app in
            // setup
            let world = try await world(app)
            let before = try await rows(naming: world.adaID, and: world.studyID, app)
            let benBefore = before.all.values.joined().filter { $0.contains(world.benID) }.count
            let ada = try #require(UUID(uuidString: world.adaID))
            let adaResponsesBefore = try await ResponseRecord.query(on: app.database).filter(\.$patient.$id == ada)
                .count()

            // act
            let reply = try await world.account.patient.send(.DELETE, "/studies/\(world.studyID)/enrollment?erase=true")

            // verify
            #expect(reply.status == .noContent, "\(reply.text)")
            #expect(before.ids.count >= 4, "enrolment, consent, prompt, response")
            let after = try await rows(naming: world.adaID, and: world.studyID, app)
            for (table, rows) in after.all where table != ErasureRecord.schema {
                for row in rows {
                    #expect(!(row.contains(world.adaID) && row.contains(world.studyID)), "\(table): \(row)")
                    for id in before.ids { #expect(!row.contains(id), "\(table) still names \(id)") }
                }
            }
            #expect(after.all.values.joined().filter { $0.contains(world.benID) }.count == benBefore)
            #expect(
                try await ResponseRecord.query(on: app.database).filter(\.$patient.$id == ada).count()
                    == adaResponsesBefore - 1)
            #expect(try await world.account.patient.send(.GET, "/me").status == .ok)
            let tombstone = try #require(try await ErasureRecord.query(on: app.database).first())
            #expect(tombstone.scope == .studyData)
            #expect(tombstone.$study.id?.uuidString.lowercased() == world.studyID)
            let receipt = try #require(app.mailer.sent.last)
            #expect(receipt.to == "ada@example.org" && receipt.text.contains("Stress study (open)"))
            #expect(receipt.text.contains("- questionnaire answers: 1"))
        }
    }

    @Test("stop and keep: the enrolment is withdrawn and the answers stay with the study")
    func keep() async throws {
        try await withTestApp { app in
            // setup
            let world = try await world(app)
            let study = try #require(UUID(uuidString: world.studyID))
            let ada = try #require(UUID(uuidString: world.adaID))
            let count = try await ResponseRecord.query(on: app.database).filter(\.$studyID == study).count()

            // act
            let reply = try await world.account.patient.send(.DELETE, "/studies/\(world.studyID)/enrollment")

            // verify
            #expect(reply.status == .noContent)
            #expect(count == 2)
            #expect(try await ResponseRecord.query(on: app.database).filter(\.$studyID == study).count() == count)
            let enrollment = try await EnrollmentRecord.query(on: app.database).filter(\.$study.$id == study).filter(
                \.$patient.$id == ada
            ).first()
            #expect(enrollment?.status == .withdrawn)
            #expect(try await app.count("erasures") == 0)
        }
    }

    @Test("deleting after leaving works; deleting in a study never joined is refused and changes nothing")
    func eraseLaterOrNever() async throws {
        try await withTestApp { app in
            // setup
            let world = try await world(app)
            let (researcher, _) = try await app.staff("researcher", "other@uni.example")
            let otherStudy = try await StudyAPITests().createStudy(researcher, StudyAPITests.study("open"))
            _ = try await world.account.patient.send(.DELETE, "/studies/\(world.studyID)/enrollment")
            let responses = try await app.count("responses")

            // act
            let never = try await world.account.patient.send(.DELETE, "/studies/\(otherStudy)/enrollment?erase=true")
            let later = try await world.account.patient.send(.DELETE, "/studies/\(world.studyID)/enrollment?erase=true")
            let again = try await world.account.patient.send(.DELETE, "/studies/\(world.studyID)/enrollment?erase=true")

            // verify
            #expect(never.status == .conflict)
            #expect(never.body["type"].string == "/problems/not-enrolled")
            #expect(later.status == .noContent)
            #expect(again.status == .conflict)
            #expect(try await app.count("responses") == responses - 1)
            let study = try #require(UUID(uuidString: world.studyID))
            let ada = try #require(UUID(uuidString: world.adaID))
            #expect(
                try await EnrollmentRecord.query(on: app.database).filter(\.$study.$id == study).filter(
                    \.$patient.$id == ada
                ).count() == 0)
            #expect(try await app.count("erasures WHERE scope = 'studyData'") == 1)
        }
    }
}
