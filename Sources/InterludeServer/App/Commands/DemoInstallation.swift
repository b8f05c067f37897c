import Fluent
import Foundation
import InterludeCore
import Logging

/// `serve --demo`: on the first start every template with four weeks of history, written by stepping a clock of its
/// own through those weeks; on every later start nothing new. The accounts' passwords are kept in a file only the
/// server's user may read, so each start can show them again.
struct DemoInstallation: Sendable {
    static let days = 28
    static let accountsFile = "demo-accounts.txt"
    static let domain = "demo.example.org"

    let database: any Database
    let services: AppServices
    let logger: Logger

    private var accountsPath: String { services.settings.dataDirectory + "/" + Self.accountsFile }

    /// The demo's accounts, created with their history if this installation has none yet; nil when the demo exists
    /// but its accounts file was removed.
    func ensure() async throws -> [DemoSetup.Account]? {
        if try await UserRecord.query(on: database).filter(\.$email == "therapist@\(Self.domain)").first() != nil {
            return try? Self.read(accountsPath)
        }
        logger.notice("Setting up the demonstration: every template with four weeks of history …")
        let end = services.clock.now
        let clock = DemoClock(end.addingTimeInterval(-Double(Self.days) * 86_400))
        let past = services.on(clock.wallClock)
        let accounts = try await database.atomically { database in
            try await Self.create(
                database: database, past: past, clock: clock, until: end, logger: logger, present: services)
        }
        try Self.write(accounts, to: accountsPath)
        return accounts
    }

    /// The people and plans as on the first day, the weeks that followed, and the records kept with dates of their own.
    private static func create(
        database: any Database, past: AppServices, clock: DemoClock, until end: Date, logger: Logger,
        present: AppServices
    ) async throws -> [DemoSetup.Account] {
        let setup = DemoSetup(database: database, services: past, logger: logger)
        let (therapist, therapistAccount) = try await setup.staff(
            .therapist, email: "therapist@\(domain)", name: "Dr. Demo Therapist")
        let (researcher, researcherAccount) = try await setup.staff(
            .researcher, email: "researcher@\(domain)", name: "Demo Study Leader")
        let (ada, adaAccount) = try await setup.pairedPatient(
            email: "ada@\(domain)", name: "Ada Demo", therapist: therapist)
        let (ben, benAccount) = try await setup.pairedPatient(
            email: "ben@\(domain)", name: "Ben Demo", therapist: therapist)
        let (chris, chrisAccount) = try await setup.registeredPatient(email: "chris@\(domain)", name: "Chris Demo")
        try await setup.planIntersession(therapist: therapist)
        try await setup.planPHQ9(therapist: therapist)
        try await setup.planIACT(therapist: therapist)
        try await setup.scheduleSessions(of: ada, with: therapist, onDays: [3, 10, 17, 24, 31, 38])
        try await setup.scheduleSessions(of: ben, with: therapist, onDays: [6, 13, 20, 27, 34])
        try await setup.planTrackYourStress(researcher: researcher, patient: chris)
        try await setup.planTinnitusNavigator(researcher: researcher, patient: chris)
        try await setup.planAnima(researcher: researcher, patient: chris)

        let people = [
            DemoHistory.Person(user: ada, answerRate: { _ in 0.85 }, settled: quietItem9),
            // Ben keeps up for three weeks and then lets his Dailies pass; his PHQ-9s of the last two weeks raise the
            // risk alert. Two, not one: in the hours after this week's opens (Monday evening) it is not answered yet.
            DemoHistory.Person(
                user: ben, answerRate: { day in day < 21 ? 0.8 : 0.1 },
                settled: { key, daysBeforeEnd in
                    guard key == "phq-9" else { return [:] }
                    return ["phq9_9": .text(daysBeforeEnd < 14 ? "1" : "0")]
                }),
            DemoHistory.Person(user: chris, answerRate: { _ in 0.75 }, settled: quietItem9),
        ]
        let history = DemoHistory(database: database, services: past, clock: clock)
        try await history.run(
            until: end, people: people,
            events: try await setup.sessionFollowUps(ada: ada, ben: ben, therapist: therapist, from: clock.now),
            seed: 2026)

        let today = DemoSetup(database: database, services: present, logger: logger)
        try await today.recordIACTWeeks(of: ada, therapist: therapist)
        try await today.recordTinnitusHistory(of: chris)
        try await today.recordAnimaMonth(of: chris)
        return [therapistAccount, researcherAccount, adaAccount, benAccount, chrisAccount]
    }

    /// Nobody but Ben in his PHQ-9s of the last two weeks says more than "not at all" to item 9.
    private static let quietItem9: @Sendable (String, Int) -> Answers = { key, _ in
        key == "phq-9" ? ["phq9_9": .text("0")] : [:]
    }

    private static func write(_ accounts: [DemoSetup.Account], to path: String) throws {
        let text = accounts.map { "\($0.role.rawValue)\t\($0.email)\t\($0.password)" }.joined(separator: "\n") + "\n"
        guard
            FileManager.default.createFile(
                atPath: path, contents: Data(text.utf8), attributes: [.posixPermissions: 0o600])
        else { throw CocoaError(.fileWriteNoPermission) }
    }

    private static func read(_ path: String) throws -> [DemoSetup.Account] {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        return text.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: "\t").map(String.init)
            guard fields.count == 3, let role = Role(rawValue: fields[0]) else { return nil }
            return DemoSetup.Account(role: role, email: fields[1], password: fields[2])
        }
    }
}
