import FluentKit
import Foundation
import SQLKit

extension Statements {
    /// Switches an SQLite file to its write-ahead log, so readers go on beside the writer.
    static func useWriteAheadLog(on database: any Database) async throws {
        try await sql(database).raw("PRAGMA journal_mode = WAL").run()
    }

    /// Creates a PostgreSQL schema unless it exists; the name is checked to be a plain identifier first.
    static func createSchema(_ schema: String, on database: any Database) async throws {
        try await sql(database).raw("CREATE SCHEMA IF NOT EXISTS \(unsafeRaw: schema)").run()
    }

    /// Asks the database something that needs no table, to see that it answers.
    static func ping(_ database: any Database) async throws {
        try await sql(database).raw("SELECT 1").run()
    }

    /// PostgreSQL's own clock, in seconds since 1970.
    static func postgresClock(on database: any Database) async throws -> Double? {
        try await sql(database).raw("SELECT EXTRACT(EPOCH FROM clock_timestamp()) AS now").first()?
            .decode(column: "now", as: Double.self)
    }

    /// Inserts prepared rows in one statement, for fixtures a benchmark writes past the services; with
    /// `skippingConflictsOf`, a row whose columns clash with a stored one is passed over.
    package static func insertRows(
        _ rows: [[any SQLExpression]], into table: String, columns: [String],
        skippingConflictsOf conflict: [String]? = nil,
        on database: any Database
    ) async throws {
        guard !rows.isEmpty else { return }
        var builder = sql(database).insert(into: table).columns(columns)
        for row in rows { builder = builder.values(row) }
        if let conflict { builder = builder.ignoringConflicts(with: conflict) }
        try await builder.run()
    }
}
