import FluentKit
import SQLKit

/// The statements the server writes out instead of asking Fluent's query builder, each a function named for what it
/// reads or changes, with typed arguments and results. They live here and nowhere else (a test holds the sources to
/// it): a paths phones use on every request (the sign-in check, the sync, a submission), a statement the builder
/// cannot express (a conditional update, an insert that skips conflicts, a lock), or one that reads plain values
/// where models would cost more than the statement. Every one runs on SQLite and PostgreSQL alike.
package enum Statements {
    /// The SQL side of a database: every driver Interlude runs on (the embedded engine, Fluent's SQLite and
    /// PostgreSQL drivers) speaks SQL.
    static func sql(_ database: any Database) -> any SQLDatabase {
        database as! any SQLDatabase
    }

    /// Whether the database is PostgreSQL, where some statements take locks SQLite has no need of.
    static func isPostgres(_ database: any Database) -> Bool {
        (database as? any SQLDatabase)?.dialect.name == "postgresql"
    }
}
