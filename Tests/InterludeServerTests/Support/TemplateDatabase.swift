import FluentPostgresDriver
import Foundation
import SQLKit
import VaporTesting

@testable import InterludeServer

/// Every test starts on a database of its own, copied from one this test process migrated once: bringing an empty
/// database up to date costs more than most tests. On SQLite the copy is a file; on PostgreSQL a database created
/// from the template, with the schema in a search path of its own as a deployment may have it.
actor TemplateDatabase {
    static let shared = TemplateDatabase()

    /// The schema the PostgreSQL copies keep their tables in.
    private static let postgresSchema = "interlude"

    private enum Template {
        case sqlite(path: String)
        case postgres(admin: Application, name: String, url: URLComponents)
    }

    private var template: Task<Template, any Error>?

    /// A fresh, migrated database called `name`; `remove` it when the test is done.
    func copy(named name: String, settings: Settings) async throws -> Settings.Database {
        switch try await prepared(settings).value {
        case .sqlite(let templatePath):
            let path = Self.sqlitePath(name)
            try FileManager.default.copyItem(atPath: templatePath, toPath: path)
            return .sqliteFile(path)
        case .postgres(let admin, let templateName, var url):
            // A plain copy of the template's files: PostgreSQL 15 otherwise writes every page of it to its log, which
            // for hundreds of copies costs more than the tests that use them.
            try await (admin.db as! any SQLDatabase)
                .raw("CREATE DATABASE \(ident: name) TEMPLATE \(ident: templateName) STRATEGY = FILE_COPY").run()
            url.path = "/" + name
            return .postgres(url: url.string ?? "", schema: Self.postgresSchema)
        }
    }

    /// Removes a copy made by `copy(named:settings:)`.
    func remove(named name: String) async {
        guard case .postgres(let admin, _, _)? = try? await template?.value else {
            Self.removeSQLite(at: Self.sqlitePath(name))
            return
        }
        try? await (admin.db as! any SQLDatabase).raw("DROP DATABASE IF EXISTS \(ident: name) WITH (FORCE)").run()
    }

    private func prepared(_ settings: Settings) -> Task<Template, any Error> {
        if let template { return template }
        let made = Task { try await Self.make(settings) }
        template = made
        return made
    }

    private static let templatePrefix = "interlude_template_"

    fileprivate static func templateName(_ pid: Int32) -> String { templatePrefix + String(pid) }

    fileprivate static func sqlitePath(_ name: String) -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent(name + ".sqlite").path
    }

    /// Removes an SQLite database file with its write-ahead log and shared-memory index.
    private static func removeSQLite(at path: String) {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }

    private static func make(_ settings: Settings) async throws -> Template {
        let name = templateName(getpid())
        guard let base = TestDatabase.postgresURL else {
            // A consistent file of its own (VACUUM INTO), without the write-ahead log of the database it came from.
            let scratch = sqlitePath(name + "_scratch")
            let path = sqlitePath(name)
            try? FileManager.default.removeItem(atPath: path)
            try await migrated(settings, database: .sqliteFile(scratch)) { app, settings in
                _ = try await DatabaseBackup(database: app.db, settings: settings).write(to: path)
            }
            removeSQLite(at: scratch)
            atexit(removeSQLiteTemplate)
            return .sqlite(path: path)
        }
        guard var url = URLComponents(string: base) else { throw TemplateError.notAURL }
        let admin = try await Application.make(.testing)
        // Hundreds of tests start at once and ask for their copies together: they wait their turn, however long.
        admin.databases.use(
            .postgres(
                configuration: try SQLPostgresConfiguration(url: base), maxConnectionsPerEventLoop: 4,
                connectionPoolTimeout: .minutes(15)),
            as: .psql)
        let sql = admin.db as! any SQLDatabase
        // Templates of test runs that ended are removed; those of runs still going are theirs.
        for row in try await sql.raw("SELECT datname FROM pg_database WHERE datname LIKE \(bind: templatePrefix + "%")")
            .all()
        {
            let stale = try row.decode(column: "datname", as: String.self)
            guard let pid = Int32(stale.dropFirst(templatePrefix.count)), kill(pid, 0) != 0, errno == ESRCH else {
                continue
            }
            try await sql.raw("DROP DATABASE IF EXISTS \(ident: stale) WITH (FORCE)").run()
        }
        try await sql.raw("CREATE DATABASE \(ident: name)").run()
        url.path = "/" + name
        // A template must have no connections when it is copied: the application that migrated it is shut down.
        try await migrated(settings, database: .postgres(url: url.string ?? "", schema: postgresSchema)) { _, _ in }
        return .postgres(admin: admin, name: name, url: url)
    }

    private static func migrated(
        _ settings: Settings, database: Settings.Database, then finish: (Application, Settings) async throws -> Void
    ) async throws {
        var settings = settings
        settings.database = database
        let app = try await Application.make(.testing)
        do {
            try await configure(app, settings: settings, clock: TestClock().wallClock, mailer: CapturingMailer())
            try await migrate(app)
            try await finish(app, settings)
        } catch {
            try? await app.asyncShutdown()
            throw error
        }
        try await app.asyncShutdown()
    }

    private enum TemplateError: Error {
        case notAURL
    }
}

/// The SQLite template goes with the test process that made it.
private func removeSQLiteTemplate() {
    try? FileManager.default.removeItem(atPath: TemplateDatabase.sqlitePath(TemplateDatabase.templateName(getpid())))
}
