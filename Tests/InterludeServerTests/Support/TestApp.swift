import Fluent
import FluentPostgresDriver
import Foundation
import NIOConcurrencyHelpers
import SQLKit
import Testing
import VaporTesting

@testable import InterludeServer

/// A clock tests move by hand.
final class TestClock: Sendable {
    private let current: NIOLockedValueBox<Date>

    init(_ start: Date = .t0) {
        current = NIOLockedValueBox(start)
    }

    var now: Date { current.withLockedValue { $0 } }

    func advance(by seconds: TimeInterval) {
        current.withLockedValue { $0 = $0.addingTimeInterval(seconds) }
    }

    /// Waiting moves the clock instead of taking time.
    var wallClock: WallClock { WallClock({ self.now }, sleep: { self.advance(by: $0) }) }
}

/// Keeps every email instead of sending it.
final class CapturingMailer: Mailer {
    private let messages = NIOLockedValueBox<[EmailMessage]>([])

    func send(_ message: EmailMessage) async throws {
        messages.withLockedValue { $0.append(message) }
        TestSecrets.record([message.to] + Self.linkTokens(in: message.text))
    }

    var sent: [EmailMessage] { messages.withLockedValue { $0 } }

    private static func linkTokens(in text: String) -> [String] {
        text.components(separatedBy: "?token=").dropFirst().map { String($0.prefix { !$0.isWhitespace }) }
    }

    /// The token of the newest link to `path` sent to `address`.
    func token(for path: String, to address: String) -> String? {
        for message in sent.reversed() where message.to == address {
            guard let range = message.text.range(of: "\(path)?token=") else { continue }
            return String(message.text[range.upperBound...].prefix { !$0.isWhitespace })
        }
        return nil
    }
}

extension Date {
    /// A fixed instant all tests start at: Monday, 2 March 2026, 09:00 in Vienna.
    static let t0 = Date(timeIntervalSince1970: 1_772_438_400)
}

/// The database a test runs on: a copy of a migrated SQLite file by default, a copy of a migrated database on the
/// PostgreSQL server named by `TEST_DATABASE_URL` when it is set (see `TemplateDatabase`). The SQLite file is run by
/// the embedded engine, or by Fluent's stock driver when `TEST_SQLITE_DRIVER` is `fluent`; `TEST_API_FAST_PATHS=off`
/// answers every operation by the generated code (see `FastPaths`).
enum TestDatabase {
    static var postgresURL: String? {
        ProcessInfo.processInfo.environment["TEST_DATABASE_URL"].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// A fixed VAPID key, so tests write no key file.
    static let vapidKey = "-8WjOK_X-T09CjunVL_RH3jEEpkM4fCP_9M3abyKKMA"

    static var sqliteDriver: Settings.SQLiteDriver {
        ProcessInfo.processInfo.environment["TEST_SQLITE_DRIVER"].flatMap(Settings.SQLiteDriver.init(rawValue:))
            ?? .embedded
    }

    static var apiFastPaths: Bool {
        ProcessInfo.processInfo.environment["TEST_API_FAST_PATHS"] != "off"
    }

    static var engineName: String { postgresURL == nil ? "sqlite" : "postgres" }
}

/// One configured application with its test doubles.
struct TestContext: Sendable {
    let app: Application
    let clock: TestClock
    let mailer: CapturingMailer
    let settings: Settings

    var database: any Database { app.db }
    var sql: any SQLDatabase { app.db as! any SQLDatabase }
}

extension TestContext {
    /// Whether the installation's file store holds `file`: on the embedded default a file in the data directory, on
    /// PostgreSQL chunks in the database.
    func stores(_ file: StoredFile) async throws -> Bool {
        try await app.interlude.files(on: database).read(file) != nil
    }
}

/// Runs `test` against a fresh, migrated application and removes its database afterwards.
func withTestApp(
    mailer: (any Mailer)? = nil, settings change: (inout Settings) -> Void = { _ in },
    _ test: (TestContext) async throws -> Void
) async throws {
    let clock = TestClock()
    let capturing = CapturingMailer()
    let name = "t_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
    var settings = Settings(
        dataDirectory: FileManager.default.temporaryDirectory.appendingPathComponent(name).path,
        database: .sqliteFile(""), publicURL: "https://interlude.test", mail: .outbox("/nonexistent"),
        mailFrom: "Interlude <noreply@interlude.test>", passwordCost: 4, trustedProxies: 1,
        dataKey: Data((0..<32).map { _ in UInt8.random(in: 0...255) }).base64EncodedString(),
        push: .init(vapidPrivateKey: TestDatabase.vapidKey, subject: "mailto:ops@interlude.test", allowLoopback: true))
    settings.sqliteDriver = TestDatabase.sqliteDriver
    settings.apiFastPaths = TestDatabase.apiFastPaths
    TestLog.start()
    settings.database = try await TemplateDatabase.shared.copy(named: name, settings: settings)
    change(&settings)
    let app = try await Application.make(.testing)
    do {
        try await configure(app, settings: settings, clock: clock.wallClock, mailer: mailer ?? capturing)
        try await migrate(app)
        try await test(TestContext(app: app, clock: clock, mailer: capturing, settings: settings))
    } catch {
        try? await app.asyncShutdown()
        await TemplateDatabase.shared.remove(named: name)
        throw error
    }
    try await app.asyncShutdown()
    await TemplateDatabase.shared.remove(named: name)
}

extension TestContext {
    /// A second server process on the same database, as in a scaled-out deployment; shut it down when done.
    func twin() async throws -> Application {
        let twin = try await Application.make(.testing)
        try await configure(twin, settings: settings, clock: clock.wallClock, mailer: mailer)
        return twin
    }
}
