import FluentKit
import InterludeSQLite
import SQLKit

extension Database {
    /// Runs `body` in one transaction: all of it is kept, or none of it.
    ///
    /// On the embedded database the body runs on the writer's own thread, inside its next group commit, rather
    /// than in a task of its own that would wait behind requests for every statement; elsewhere it is Fluent's
    /// transaction. Fluent's SQLite driver begins it deferred, and a deferred transaction that read before another
    /// connection committed cannot write after: SQLite refuses it at once (`SQLITE_BUSY_SNAPSHOT`) rather than wait.
    /// So there the transaction's first statement is a write that changes nothing, which takes the write lock, as
    /// `BEGIN IMMEDIATE` would, and the others wait for it.
    package func atomically<T: Sendable>(_ body: @escaping @Sendable (any Database) async throws -> T) async throws -> T
    {
        if let embedded = self as? any GroupCommitting { return try await embedded.atomically(body) }
        guard let sql = self as? any SQLDatabase, sql.dialect.name == "sqlite" else {
            return try await transaction(body)
        }
        return try await transaction { database in
            try await Statements.sql(database).raw(#"DELETE FROM "_fluent_migrations" WHERE 0"#).run()
            return try await body(database)
        }
    }
}
