import Fluent
import Foundation
import InterludeCore
import Testing
import VaporTesting

@testable import InterludeServer

@Suite("serve --demo: every template with weeks of history, once")
struct DemoInstallationTests {
    func install(_ app: TestContext) async throws -> [DemoSetup.Account]? {
        try FileManager.default.createDirectory(atPath: app.settings.dataDirectory, withIntermediateDirectories: true)
        return try await DemoInstallation(database: app.database, services: app.app.interlude, logger: app.app.logger)
            .ensure()
    }

    func user(_ email: String, _ app: TestContext) async throws -> UserRecord {
        try #require(try await UserRecord.query(on: app.database).filter(\.$email == email).first())
    }

    @Test("four weeks of answered and missed prompts, alerts waiting, messages read, sessions past and coming")
    func history() async throws {
        try await withTestApp { app in
            // act
            let accounts = try #require(try await install(app))

            // verify
            #expect(accounts.map(\.role) == [.therapist, .researcher, .patient, .patient, .patient])
            let now = app.clock.now
            let prompts = PromptService(database: app.database, services: app.app.interlude)
            let responses = ResponseService(database: app.database, services: app.app.interlude)
            for email in ["ada@demo.example.org", "ben@demo.example.org", "chris@demo.example.org"] {
                let person = try await user(email, app)
                let compliance = try #require(try await prompts.compliance(of: [person.requireID()]).values.first)
                #expect(compliance.completed > 40 && compliance.expired > 2, "\(email): \(compliance)")
                let answered = try await responses.responses(of: person.requireID()).map(\.record.completedAt)
                #expect(answered.allSatisfy { $0 < now })
                #expect(
                    answered.min().map { now.timeIntervalSince($0) > 25 * 86_400 } == true,
                    "\(email) began four weeks ago")
            }
            let ada = try await user("ada@demo.example.org", app)
            let ben = try await user("ben@demo.example.org", app)
            let adaRate = try #require(try await prompts.compliance(of: [ada.requireID()]).values.first?.percent)
            let benRate = try #require(try await prompts.compliance(of: [ben.requireID()]).values.first?.percent)
            #expect(adaRate > benRate && adaRate >= 70, "Ada \(adaRate) %, Ben \(benRate) %")

            let alerts = try await AlertRecord.query(on: app.database).filter(\.$patient.$id == ben.requireID()).all()
            #expect(
                alerts.contains { $0.priority == .high && $0.acknowledgedAt == nil }, "the PHQ-9 item 9 alert waits")
            #expect(alerts.contains { $0.priority == .normal }, "three Dailies missed in a row")
            #expect(
                try await AlertRecord.query(on: app.database).filter(\.$patient.$id == ada.requireID()).filter(
                    \.$priority == .high
                ).count() == 0)

            let interventions = try await InterventionRecord.query(on: app.database).filter(
                \.$patient.$id == ada.requireID()
            ).all()
            #expect(interventions.contains { $0.origin == .therapist && $0.completedAt != nil })
            #expect(interventions.filter { $0.origin == .messagePlan && $0.seenAt != nil }.count > 20)
            #expect(interventions.allSatisfy { ($0.seenAt ?? $0.deliverAt) >= $0.deliverAt })
            let sessions = try await AppointmentRecord.query(on: app.database).filter(\.$patient.$id == ada.requireID())
                .all()
            #expect(
                sessions.filter { $0.startsAt < now }.count == 4 && sessions.filter { $0.startsAt > now }.count == 2)
            #expect(try await EntryRecord.query(on: app.database).filter(\.$kind == .thoughtOccurrence).count() > 20)
            #expect(try await EntryRecord.query(on: app.database).filter(\.$kind == .audiogram).count() == 3)
            #expect(try await app.count("samples") > 0)
        }
    }

    @Test("a second start changes nothing and shows the same accounts; the file of passwords only the server may read")
    func once() async throws {
        try await withTestApp { app in
            // setup
            let first = try await install(app)
            let tables = ["users", "prompts", "responses", "alerts", "interventions", "appointments", "studies"]
            var counts: [String: Int] = [:]
            for table in tables { counts[table] = try await app.count(table) }

            // act
            app.clock.advance(by: 60)
            let second = try await install(app)

            // verify
            #expect(second == first)
            for table in tables { #expect(try await app.count(table) == counts[table], "\(table)") }
            let path = app.settings.dataDirectory + "/" + DemoInstallation.accountsFile
            let permissions = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
            #expect(permissions == 0o600)
            try FileManager.default.removeItem(atPath: path)
            #expect(try await install(app) == nil)
            #expect(try await app.count("users") == counts["users"])
        }
    }
}
