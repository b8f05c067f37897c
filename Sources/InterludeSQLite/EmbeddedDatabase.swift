import FluentKit
import FluentSQL
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import SQLKit
import SQLiteKit
import VaporCSQLite

/// The embedded SQLite database. SQLite lets one connection write at a time and every commit waits for the disk,
/// so every write goes to one writer that commits the writes waiting for it together (see `GroupCommitWriter`);
/// reads run beside it on connections of their own, as WAL allows. Statements run on the thread that asks, on
/// connections that keep them prepared: that costs microseconds where a hop to a thread pool and back costs more
/// than the statement. Only the commit, which waits for the disk, and a copy of the whole file leave the thread.
extension DatabaseConfigurationFactory {
    /// `path`: the database file. `idleReaders`: reading connections kept open between reads.
    /// `checkingKeptStatements`: every model query whose text is kept is also written afresh and compared (for tests).
    public static func embeddedSQLite(path: String, idleReaders: Int, checkingKeptStatements: Bool = false) -> Self {
        .init {
            EmbeddedSQLiteConfiguration(
                path: path, idleReaders: idleReaders, checkingKeptStatements: checkingKeptStatements)
        }
    }
}

struct EmbeddedSQLiteConfiguration: DatabaseConfiguration {
    var middleware: [any AnyModelMiddleware] = []
    let path: String
    let idleReaders: Int
    let checkingKeptStatements: Bool

    func makeDriver(for databases: Databases) -> any DatabaseDriver {
        EmbeddedSQLiteDriver(
            store: EmbeddedStore(
                path: path, idleReaders: idleReaders, threadPool: databases.threadPool,
                checkingKeptStatements: checkingKeptStatements))
    }
}

struct EmbeddedSQLiteDriver: DatabaseDriver {
    let store: EmbeddedStore

    func makeDatabase(with context: DatabaseContext) -> any Database {
        EmbeddedDatabase(context: context, store: store, writing: nil)
    }

    func shutdown() {
        store.shutdown()
    }
}

/// What every `EmbeddedDatabase` of one driver shares: the file, the reading connections, the writer.
final class EmbeddedStore: Sendable {
    let path: String
    let generation = SchemaGeneration()
    let threadPool: NIOThreadPool
    let checkingKeptStatements: Bool
    private let idleReaders: Int
    private let logLimit: Int
    private let copyStep: Int
    private let idle = NIOLockedValueBox<[SQLiteHandle]>([])
    private let writing = NIOLockedValueBox<(writer: GroupCommitWriter, checkpointer: LogCheckpointer)?>(nil)

    /// `logLimit` and `copyStep`: in pages, when the log is copied back into the file (see `LogCheckpointer`).
    init(
        path: String, idleReaders: Int, threadPool: NIOThreadPool, checkingKeptStatements: Bool = false,
        logLimit: Int = LogCheckpointer.limit, copyStep: Int = LogCheckpointer.step
    ) {
        self.path = path
        self.checkingKeptStatements = checkingKeptStatements
        self.idleReaders = idleReaders
        self.threadPool = threadPool
        self.logLimit = logLimit
        self.copyStep = copyStep
    }

    /// The writer, with its connection opened (and the file put in WAL mode) and the log's copying started on first
    /// use.
    func writer() throws -> GroupCommitWriter {
        try writing.withLockedValue { writing in
            if let writing { return writing.writer }
            let handle = try SQLiteHandle(path: path, readOnly: false, generation: generation)
            try handle.execute("PRAGMA journal_mode = WAL")
            try handle.execute("PRAGMA synchronous = FULL")
            // 8 MB: room for the indexes a large write walks (a planner run, an import), no more. After a commit whose
            // writes split pages, SQLite walks the writer's whole page cache (the split numbers a page past the file's
            // end for a moment, and the commit then looks for pages past the end), and with 32 MB that walk cost every
            // group commit more than the pages a smaller cache reads again: 2 % of a submission's CPU, for 8 % of a
            // planner run's speed.
            try handle.execute("PRAGMA cache_size = -8192")
            // The savepoints of a group commit keep their undo pages in memory, not in a temporary file.
            try handle.execute("PRAGMA temp_store = MEMORY")
            // Opened before the writer's thread starts, so that a failure leaves no thread behind.
            let checkpointer = try LogCheckpointer(path: path, generation: generation, limit: logLimit, step: copyStep)
            // The log is copied beside the writer, not inside the commit that fills it (see `LogCheckpointer`).
            handle.observeLog { checkpointer.logGrew(to: $0) }
            let opened = GroupCommitWriter(handle: handle) { checkpointer.copyRemainder(on: $0) }
            writing = (opened, checkpointer)
            return opened
        }
    }

    /// Runs `body` on a reading connection, on this thread.
    func read<T>(_ body: (SQLiteHandle) throws -> T) throws -> T {
        // The file exists and is in WAL mode before anyone reads it.
        _ = try writer()
        let handle =
            try idle.withLockedValue { $0.popLast() }
            ?? SQLiteHandle(path: path, readOnly: true, generation: generation)
        defer {
            idle.withLockedValue { idle in
                if idle.count < idleReaders { idle.append(handle) }
            }
        }
        handle.refresh(generation)
        return try body(handle)
    }

    /// Runs `body` on a connection of its own on the thread pool, for work that takes long: a copy of the file,
    /// which SQLite refuses on a connection kept to reading.
    func copy(_ body: @escaping @Sendable (SQLiteHandle) throws -> Void) async throws {
        _ = try writer()
        try await threadPool.runIfActive {
            try body(SQLiteHandle(path: self.path, readOnly: false, generation: self.generation))
        }
    }

    func shutdown() {
        idle.withLockedValue { $0.removeAll() }
        writing.withLockedValue { writing in
            writing?.checkpointer.shutdown()
            writing?.writer.shutdown()
            writing = nil
        }
    }
}

/// A database whose transactions are best run as a whole on its writer (see `EmbeddedDatabase.atomically`).
public protocol GroupCommitting: Database {
    /// Runs `body` in one transaction: all of it is kept, or none of it.
    func atomically<T: Sendable>(_ body: @escaping @Sendable (any Database) async throws -> T) async throws -> T
}

/// The database as the application sees it: reads on a reading connection, writes and transactions through the
/// writer. Inside the writer's transaction (`writing`), everything runs on the writer's connection.
struct EmbeddedDatabase: GroupCommitting, SQLDatabase {
    let context: DatabaseContext
    let store: EmbeddedStore
    let writing: SQLiteHandle?
    /// SQLite's dialect, for statements written with SQLKit.
    let dialect: any SQLDialect

    init(
        context: DatabaseContext, store: EmbeddedStore, writing: SQLiteHandle?,
        dialect: any SQLDialect = SQLiteDialect()
    ) {
        self.context = context
        self.store = store
        self.writing = writing
        self.dialect = dialect
    }

    var inTransaction: Bool { writing != nil }

    // Database

    func execute(query: DatabaseQuery, onOutput: @escaping @Sendable (any DatabaseOutput) -> Void) -> EventLoopFuture<
        Void
    > {
        let model = EmbeddedDatabase(
            context: context, store: store, writing: writing, dialect: PlainQuoting(base: dialect))
        let sql: String
        let binds: [any Encodable & Sendable]
        do {
            (sql, binds) = try ModelStatement.written(query, by: model, checking: store.checkingKeptStatements)
        } catch {
            return eventLoop.makeFailedFuture(error)
        }
        let writes: Bool
        switch query.action {
        case .read, .aggregate: writes = false
        case .create, .update, .delete, .custom: writes = true
        }
        return run(sql, binds, writes: writes) { onOutput(SQLiteModelOutput($0)) }
    }

    func execute(schema: DatabaseSchema) -> EventLoopFuture<Void> {
        var schema = schema
        if schema.action == .update {
            // SQLite keeps enums as text: their changes are nothing to it. Other alterations it cannot make.
            schema.updateFields = schema.updateFields.filter {
                if case .dataType(_, .enum) = $0 { return false }
                return true
            }
            guard schema.createConstraints.isEmpty, schema.updateFields.isEmpty, schema.deleteConstraints.isEmpty else {
                return eventLoop.makeFailedFuture(
                    EmbeddedSQLiteError(code: SQLITE_ERROR, message: "SQLite cannot alter \(schema.schema) this way"))
            }
            guard !schema.createFields.isEmpty || !schema.deleteFields.isEmpty else {
                return eventLoop.makeSucceededVoidFuture()
            }
        }
        let (sql, binds) = serialize(SQLSchemaConverter(delegate: SQLiteTypes()).convert(schema))
        return run(sql, binds, writes: true) { _ in }
    }

    func execute(enum: DatabaseEnum) -> EventLoopFuture<Void> {
        eventLoop.makeSucceededVoidFuture()
    }

    func transaction<T>(_ closure: @escaping @Sendable (any Database) -> EventLoopFuture<T>) -> EventLoopFuture<T> {
        if writing != nil { return closure(self) }
        let box = ResultBox<T>()
        return write { try await closure($0).map { box.value = $0 }.get() }.map { box.value! }
    }

    /// Runs `body` in the writer's next transaction, on the writer's thread; inside one, in that transaction.
    func atomically<T: Sendable>(_ body: @escaping @Sendable (any Database) async throws -> T) async throws -> T {
        if writing != nil { return try await body(self) }
        let context = context
        let store = store
        return try await store.writer().perform {
            try await body(EmbeddedDatabase(context: context, store: store, writing: $0))
        }
    }

    func withConnection<T>(_ closure: @escaping @Sendable (any Database) -> EventLoopFuture<T>) -> EventLoopFuture<T> {
        closure(self)
    }

    // SQLDatabase

    var logger: Logger { context.logger }
    var eventLoop: any EventLoop { MultiThreadedEventLoopGroup.currentEventLoop ?? context.eventLoop }
    var version: (any SQLDatabaseReportedVersion)? { nil }
    var queryLogLevel: Logger.Level? { .debug }

    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void) -> EventLoopFuture<
        Void
    > {
        let (sql, binds) = serialize(query)
        return run(sql, binds, writes: Self.writes(query, sql: sql)) { onRow($0) }
    }

    func withSession<R>(_ closure: @escaping @Sendable (any SQLDatabase) async throws -> R) async throws -> R {
        try await closure(self)
    }

    // Running statements

    /// Runs a statement on the connection it belongs on: the writer's inside a transaction, otherwise a reading
    /// connection for a read and the writer for a write.
    private func run(
        _ sql: String, _ binds: [any Encodable & Sendable], writes: Bool,
        onRow: @escaping @Sendable (SQLiteResultRow) -> Void
    ) -> EventLoopFuture<Void> {
        do {
            let values = try binds.map(SQLiteValues.data)
            if let writing {
                logger.debug("Executing query", metadata: ["sql": "\(sql)"])
                try writing.query(sql, values, onRow)
                if Self.changesSchema(sql) { store.generation.advance() }
                return eventLoop.makeSucceededVoidFuture()
            }
            if !writes {
                logger.debug("Executing query", metadata: ["sql": "\(sql)"])
                if Self.copiesFile(sql) {
                    return eventLoop.makeFutureWithTask { try await store.copy { try $0.query(sql, values, onRow) } }
                }
                try store.read { try $0.query(sql, values, onRow) }
                return eventLoop.makeSucceededVoidFuture()
            }
        } catch {
            return eventLoop.makeFailedFuture(error)
        }
        return write { try await $0.run(sql, binds, writes: true, onRow: onRow).get() }
    }

    /// Hands `work` to the writer, which runs it inside its next transaction.
    private func write(_ work: @escaping @Sendable (EmbeddedDatabase) async throws -> Void) -> EventLoopFuture<Void> {
        let context = context
        let store = store
        let promise = eventLoop.makePromise(of: Void.self)
        do {
            try store.writer().perform(
                { try await work(EmbeddedDatabase(context: context, store: store, writing: $0)) }, completing: promise)
        } catch {
            promise.fail(error)
        }
        return promise.futureResult
    }

    /// Whether a statement changes the database; a built statement says so by its kind, other text is read.
    static func writes(_ query: any SQLExpression, sql: String) -> Bool {
        switch query {
        case is SQLSelect: false
        case is SQLInsert, is SQLUpdate, is SQLDelete: true
        default: !["SELECT", "PRAGMA", "VACUUM", "EXPLAIN"].contains(keyword(sql))
        }
    }

    /// The statement's first word in capitals, read from its bytes: every statement asks, and reading characters
    /// breaks the text into graphemes first.
    private static func keyword(_ sql: String) -> String {
        let word = sql.utf8.drop { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "(") || $0 == UInt8(ascii: "\n") }
            .prefix { $0 | 0x20 >= UInt8(ascii: "a") && $0 | 0x20 <= UInt8(ascii: "z") }
        return String(decoding: word.map { $0 & ~0x20 }, as: UTF8.self)
    }

    private static func changesSchema(_ sql: String) -> Bool {
        ["CREATE", "ALTER", "DROP"].contains(keyword(sql))
    }

    /// `VACUUM INTO` copies the whole file: seconds, not microseconds.
    private static func copiesFile(_ sql: String) -> Bool { keyword(sql) == "VACUUM" }
}

/// SQLite's types, as the SQLite driver maps Fluent's.
struct SQLiteTypes: SQLConverterDelegate {
    func customDataType(_ dataType: DatabaseSchema.DataType) -> (any SQLExpression)? {
        switch dataType {
        case .string, .enum: SQLRaw("TEXT")
        case .datetime: SQLRaw("REAL")
        case .int64: SQLRaw("INTEGER")
        default: nil
        }
    }
}
