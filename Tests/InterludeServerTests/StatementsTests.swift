import FluentKit
import Foundation
import InterludeCore
import SQLKit
import Testing

@testable import InterludeServer

/// Every statement of `Persistence/Statements/` runs against the migrated schema of the database the suite runs on
/// (SQLite through the embedded engine or Fluent's driver, PostgreSQL): a column a migration does not make fails here,
/// not on a phone.
@Suite("Statements against the migrations")
struct StatementsTests {
    @Test("every statement runs on the migrated schema and reads back what it wrote")
    func everyStatementRuns() async throws {
        try await withTestApp { app in
            // setup
            let (therapist, therapistID) = try await app.staff("therapist", "berger@praxis.example")
            let (patient, patientID) = try await app.patient()
            try await app.pair(patient, with: therapist)
            let db = app.database
            let now = app.clock.now
            let other = UUID()
            let practice = try #require(try await StudyRecord.query(on: db).filter(\.$owner.$id == therapistID).first())
            let studyID = try practice.requireID()

            // act and verify: reads
            #expect(try await Statements.liveSession(tokenHash: "unknown", kind: .api, at: now, on: db) == nil)
            #expect(try await Statements.oneTimePrompts(of: patientID, on: db).isEmpty)
            #expect(try await Statements.therapistContact(of: patientID, on: db)?.therapistID == therapistID)
            #expect(try await Statements.therapistContact(of: therapistID, on: db) == nil)
            #expect(try await Statements.lastAnswers(of: [patientID], on: db).isEmpty)
            #expect(try await Statements.rules(in: studyID, participant: patientID, on: db).isEmpty)
            #expect(try await Statements.consentInForce(of: patientID, in: studyID, on: db) == nil)
            _ = try await Statements.consentVersionsAgreed(by: patientID, in: studyID, on: db)
            #expect(try await Statements.rowIDs(of: UserRecord.schema, on: db).contains(patientID))
            try await Statements.ping(db)

            // changes of rows that are not there change nothing
            try await Statements.touchSession(other, usedAt: now, expiresAt: now, on: db)
            #expect(
                try await !Statements.changeRole(ofMember: other, to: .therapist, keepingAnOwnerOf: studyID, on: db))
            #expect(try await !Statements.removeMember(other, keepingAnOwnerOf: studyID, on: db))
            #expect(try await Statements.claimNotifications([other], until: now, now: now, on: db).isEmpty)
            try await Statements.deleteRows([other], of: UserRecord.schema, on: db)
            try await db.atomically { transaction in
                if Statements.isPostgres(transaction) {
                    try await Statements.lockStudy(studyID, on: transaction)
                    #expect(try await Statements.tryAdvisoryLock(1, on: transaction))
                }
            }

            // inserts, read back
            let sample = Sample(type: .heartRate, value: 61, start: now, end: now, sourceID: "statements-1")
            #expect(try await Statements.insertSamples([sample, sample], of: patientID, at: now, on: db) == 1)
            #expect(try await Statements.sampleCounts(of: patientID, on: db) == [.heartRate: 1])
            #expect(
                try await Statements.sampleValues(.heartRate, of: patientID, since: now, on: db).map(\.value) == [61])
            let item = NotificationOutbox.Item(
                userID: patientID, category: .questionnaires, dedupeKey: "statements", title: "t", body: "b",
                path: "/app",
                dueAt: now, expiresAt: now.addingTimeInterval(3600))
            #expect(try await Statements.insertNotifications([item, item], at: now, on: db) == 1)
            let queued = try await NotificationRecord.query(on: db).all().map { try $0.requireID() }
            #expect(
                try await Statements.claimNotifications(queued, until: now.addingTimeInterval(60), now: now, on: db)
                    == Set(queued))
            try await Statements.insertPin("phq9", version: 1, in: studyID, at: now, on: db)
            try await Statements.movePin("phq9", to: 2, in: studyID, at: now, on: db)
            let pin = try #require(
                try await InstrumentPinRecord.query(on: db).filter(\.$instrumentKey == "phq9").first())
            #expect(pin.version == 2)
        }
    }

    @Test("a statement naming a column its table does not have is refused by the database")
    func aWrongColumnFails() async throws {
        try await withTestApp { app in
            await #expect(throws: (any Error).self) {
                try await Statements.insertRows(
                    [[SQLBind(UUID())]], into: SampleRecord.schema, columns: ["no_such_column"], on: app.database)
            }
        }
    }
}
