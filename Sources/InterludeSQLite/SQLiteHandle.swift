import FluentKit
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import SQLiteNIO
import VaporCSQLite

/// One open connection to the embedded database, called directly rather than through a thread pool: a statement
/// on a database in the page cache takes microseconds, far less than handing it to another thread and back.
/// Statements are prepared once and kept. A handle is used by one thread at a time; whoever holds it says so.
final class SQLiteHandle: @unchecked Sendable {
    private let connection: OpaquePointer
    private var statements: [String: PreparedStatement] = [:]
    /// The schema generation the kept statements were prepared in; see `SchemaGeneration`.
    private var generation: Int
    /// What `observeLog` registered, kept as long as the connection that calls it.
    private var logObserver: LogObserver?

    /// How long a statement waits for another process's lock before it fails.
    static let busyTimeoutMilliseconds: Int32 = 30_000
    /// Statements kept per connection; a larger set is started afresh.
    static let keptStatements = 512

    init(path: String, readOnly: Bool, generation: SchemaGeneration) throws {
        var connection: OpaquePointer?
        let flags = SQLITE_OPEN_CREATE | SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE
        let opened = sqlite_nio_sqlite3_open_v2(path, &connection, flags, nil)
        guard opened == SQLITE_OK, let connection else {
            if let connection { sqlite_nio_sqlite3_close_v2(connection) }
            throw EmbeddedSQLiteError(code: opened, message: "cannot open the database at \(path)")
        }
        self.connection = connection
        self.generation = generation.current
        sqlite_nio_sqlite3_busy_timeout(connection, Self.busyTimeoutMilliseconds)
        do {
            try execute("PRAGMA foreign_keys = ON")
            if readOnly { try execute("PRAGMA query_only = ON") }
        } catch {
            sqlite_nio_sqlite3_close_v2(connection)
            throw error
        }
    }

    deinit {
        for statement in statements.values { sqlite_nio_sqlite3_finalize(statement.pointer) }
        sqlite_nio_sqlite3_close_v2(connection)
    }

    /// Runs a statement without values and ignores what it returns.
    func execute(_ sql: String) throws {
        try query(sql, []) { _ in }
    }

    /// Runs one statement with its values and hands each row to `onRow` as it is read.
    func query(_ sql: String, _ binds: [SQLiteData], _ onRow: (SQLiteResultRow) throws -> Void) throws {
        var statement = try prepared(sql)
        let pointer = statement.pointer
        // Values stay bound until the next run binds new ones: clearing them would make SQLite prepare again
        // every statement whose plan took a value into account.
        defer { sqlite_nio_sqlite3_reset(pointer) }
        guard sqlite_nio_sqlite3_bind_parameter_count(pointer) == binds.count else {
            throw EmbeddedSQLiteError(code: SQLITE_RANGE, message: "\(binds.count) values for the parameters of \(sql)")
        }
        for (index, value) in binds.enumerated() {
            try check(bind(value, at: Int32(index + 1), in: pointer))
        }
        var first = true
        while true {
            let step = sqlite_nio_sqlite3_step(pointer)
            guard step == SQLITE_ROW else {
                guard step == SQLITE_DONE else { throw error(step) }
                return
            }
            if first {
                first = false
                // SQLite prepares a statement again when another process changed the schema; so are its columns.
                if sqlite_nio_sqlite3_column_count(pointer) != statement.columns.names.count {
                    statement = PreparedStatement(pointer: pointer, columns: Self.columns(of: pointer))
                    statements[sql] = statement
                }
            }
            try onRow(SQLiteResultRow(columns: statement.columns, values: row(of: statement)))
        }
    }

    /// Hands `observe` the length of the write-ahead log, in pages, after every commit that added to it. SQLite then
    /// no longer copies the log back into the file by itself; `checkpoint()` does.
    func observeLog(_ observe: @escaping @Sendable (Int) -> Void) {
        let observer = LogObserver(observe)
        logObserver = observer
        _ = sqlite_nio_sqlite3_wal_hook(
            connection,
            { context, _, _, length in
                if let context { Unmanaged<LogObserver>.fromOpaque(context).takeUnretainedValue().observe(Int(length)) }
                return SQLITE_OK
            }, Unmanaged.passUnretained(observer).toOpaque())
    }

    /// Copies into the file what it can of the write-ahead log, waiting for no one; false when another connection
    /// was copying it.
    func checkpoint() throws -> Bool {
        let result = sqlite_nio_sqlite3_wal_checkpoint_v2(connection, nil, SQLITE_CHECKPOINT_PASSIVE, nil, nil)
        if result & 0xff == SQLITE_BUSY { return false }
        try check(result)
        return true
    }

    /// Flushes the database file to the disk.
    func syncFile() throws {
        var file: UnsafeMutablePointer<sqlite3_file>?
        try check(sqlite_nio_sqlite3_file_control(connection, "main", SQLITE_FCNTL_FILE_POINTER, &file))
        guard let file, let sync = file.pointee.pMethods?.pointee.xSync else { return }
        try check(sync(file, SQLITE_SYNC_NORMAL))
    }

    /// Drops the kept statements when the schema changed since they were prepared: their columns may differ.
    func refresh(_ generation: SchemaGeneration) {
        let current = generation.current
        guard current != self.generation else { return }
        for statement in statements.values { sqlite_nio_sqlite3_finalize(statement.pointer) }
        statements.removeAll()
        self.generation = current
    }

    private struct PreparedStatement {
        let pointer: OpaquePointer
        let columns: SQLiteColumns
    }

    private func prepared(_ sql: String) throws -> PreparedStatement {
        if let kept = statements[sql] { return kept }
        var pointer: OpaquePointer?
        let result = sqlite_nio_sqlite3_prepare_v3(
            connection, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &pointer, nil)
        guard result == SQLITE_OK, let pointer else { throw error(result) }
        let statement = PreparedStatement(pointer: pointer, columns: Self.columns(of: pointer))
        if statements.count >= Self.keptStatements {
            for kept in statements.values { sqlite_nio_sqlite3_finalize(kept.pointer) }
            statements.removeAll()
        }
        statements[sql] = statement
        return statement
    }

    private static func columns(of statement: OpaquePointer) -> SQLiteColumns {
        SQLiteColumns(
            (0..<sqlite_nio_sqlite3_column_count(statement)).map {
                String(cString: sqlite_nio_sqlite3_column_name(statement, $0))
            })
    }

    private func bind(_ value: SQLiteData, at index: Int32, in statement: OpaquePointer) -> Int32 {
        switch value {
        case .integer(let integer): return sqlite_nio_sqlite3_bind_int64(statement, index, Int64(integer))
        case .float(let double): return sqlite_nio_sqlite3_bind_double(statement, index, double)
        case .null: return sqlite_nio_sqlite3_bind_null(statement, index)
        case .text(let text):
            return sqlite_nio_sqlite3_bind_text64(
                statement, index, text, UInt64(text.utf8.count), Self.transient, UInt8(SQLITE_UTF8))
        case .blob(let buffer):
            return buffer.withUnsafeReadableBytes {
                sqlite_nio_sqlite3_bind_blob64(statement, index, $0.baseAddress, UInt64($0.count), Self.transient)
            }
        }
    }

    private func row(of statement: PreparedStatement) throws -> [SQLiteData] {
        let pointer = statement.pointer
        return try (0..<Int32(statement.columns.names.count)).map { column in
            switch sqlite_nio_sqlite3_column_type(pointer, column) {
            case SQLITE_INTEGER: return .integer(Int(sqlite_nio_sqlite3_column_int64(pointer, column)))
            case SQLITE_FLOAT: return .float(sqlite_nio_sqlite3_column_double(pointer, column))
            case SQLITE_NULL: return .null
            case SQLITE_TEXT:
                // The text first, then its length, as SQLite asks.
                let text = sqlite_nio_sqlite3_column_text(pointer, column)
                let count = Int(sqlite_nio_sqlite3_column_bytes(pointer, column))
                return .text(String(decoding: UnsafeRawBufferPointer(start: text, count: count), as: UTF8.self))
            case SQLITE_BLOB:
                let bytes = sqlite_nio_sqlite3_column_blob(pointer, column)
                let count = Int(sqlite_nio_sqlite3_column_bytes(pointer, column))
                var buffer = ByteBufferAllocator().buffer(capacity: count)
                buffer.writeBytes(UnsafeRawBufferPointer(start: bytes, count: count))
                return .blob(buffer)
            case let type:
                throw EmbeddedSQLiteError(code: SQLITE_MISMATCH, message: "unexpected column type \(type)")
            }
        }
    }

    private func check(_ result: Int32) throws {
        guard result == SQLITE_OK else { throw error(result) }
    }

    private func error(_ code: Int32) -> EmbeddedSQLiteError {
        let message = sqlite_nio_sqlite3_errmsg(connection).map { String(cString: $0) } ?? "unknown error"
        return EmbeddedSQLiteError(code: sqlite_nio_sqlite3_extended_errcode(connection), message: message)
    }

    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
}

/// What a connection calls after a commit that added to the write-ahead log; see `SQLiteHandle.observeLog`.
private final class LogObserver: Sendable {
    let observe: @Sendable (Int) -> Void

    init(_ observe: @escaping @Sendable (Int) -> Void) {
        self.observe = observe
    }
}

/// Counts changes to the schema, so kept statements are prepared again after a migration.
final class SchemaGeneration: Sendable {
    private let value = NIOLockedValueBox(0)

    var current: Int { value.withLockedValue { $0 } }

    func advance() {
        value.withLockedValue { $0 += 1 }
    }
}

/// An error SQLite reported, with its extended result code.
struct EmbeddedSQLiteError: Error, DatabaseError, CustomStringConvertible {
    let code: Int32
    let message: String

    private var primary: Int32 { code & 0xff }

    var isSyntaxError: Bool { primary == SQLITE_ERROR || primary == SQLITE_SCHEMA }
    var isConnectionClosed: Bool { primary == SQLITE_MISUSE || primary == SQLITE_CANTOPEN }
    var isConstraintFailure: Bool { primary == SQLITE_CONSTRAINT }
    var description: String { "SQLite error \(code): \(message)" }
}
