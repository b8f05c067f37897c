import FluentKit
import FluentSQLiteDriver
import NIOConcurrencyHelpers
import NIOCore
import SQLKit

/// SQLite lets one connection write at a time, and every commit waits for the disk. Left to themselves, concurrent
/// requests on separate connections wait for each other's write lock, and each pays its own flush.
///
/// Here every write goes to one writer, which gathers the writes waiting for it into one transaction, each in a
/// savepoint of its own (so one failing write rolls back alone), and commits them together: one flush for all of
/// them. A write's caller hears back only after that commit, so an acknowledged write is durable
/// (`synchronous=FULL`, SQLite's default here). Reads run beside it on the other connections, as WAL allows.
extension DatabaseConfigurationFactory {
    /// `readersPerLoop`: reading connections for each event loop, so a request waiting on a read does not hold up
    /// the others on its core.
    static func sqliteGroupCommit(_ configuration: SQLiteConfiguration, readersPerLoop: Int) -> Self {
        .init {
            GroupCommitConfiguration(
                reading: DatabaseConfigurationFactory.sqlite(configuration, maxConnectionsPerEventLoop: readersPerLoop).make(),
                writing: DatabaseConfigurationFactory.sqlite(configuration).make())
        }
    }
}

struct GroupCommitConfiguration: DatabaseConfiguration {
    var middleware: [any AnyModelMiddleware] = []
    let reading: any DatabaseConfiguration
    let writing: any DatabaseConfiguration

    func makeDriver(for databases: Databases) -> any DatabaseDriver {
        let writing = writing.makeDriver(for: databases)
        return GroupCommitDriver(reading: reading.makeDriver(for: databases), writing: writing, writer: GroupCommitWriter(driver: writing))
    }
}

struct GroupCommitDriver: DatabaseDriver {
    let reading: any DatabaseDriver
    let writing: any DatabaseDriver
    let writer: GroupCommitWriter

    func makeDatabase(with context: DatabaseContext) -> any Database {
        GroupCommitDatabase(reading: reading.makeDatabase(with: context), writer: writer)
    }

    func shutdown() {
        reading.shutdown()
        writing.shutdown()
    }

    func shutdownAsync() async {
        await reading.shutdownAsync()
        await writing.shutdownAsync()
    }
}

/// What the application sees: reads go to `reading`, writes and transactions to the writer.
struct GroupCommitDatabase: Database, SQLDatabase {
    let reading: any Database
    let writer: GroupCommitWriter
    /// Read once: SQLKit asks for it at every identifier and value it writes.
    let dialect: any SQLDialect

    init(reading: any Database, writer: GroupCommitWriter) {
        self.reading = reading
        self.writer = writer
        self.dialect = (reading as! any SQLDatabase).dialect
    }

    private var readingSQL: any SQLDatabase { reading as! any SQLDatabase }

    var context: DatabaseContext { reading.context }
    var inTransaction: Bool { false }

    func execute(query: DatabaseQuery, onOutput: @escaping @Sendable (any DatabaseOutput) -> Void) -> EventLoopFuture<Void> {
        switch query.action {
        case .read, .aggregate:
            return SQLiteModelQueries(reading).execute(query: query, onOutput: onOutput)
        case .create, .update, .delete, .custom:
            return write { try await $0.execute(query: query, onOutput: onOutput).get() }
        }
    }

    func execute(schema: DatabaseSchema) -> EventLoopFuture<Void> {
        write { try await $0.execute(schema: schema).get() }
    }

    func execute(enum: DatabaseEnum) -> EventLoopFuture<Void> {
        write { try await $0.execute(enum: `enum`).get() }
    }

    func transaction<T>(_ closure: @escaping @Sendable (any Database) -> EventLoopFuture<T>) -> EventLoopFuture<T> {
        let box = UncheckedBox<T>()
        return write { try await closure($0).map { box.value = $0 }.get() }.map { box.value! }
    }

    func withConnection<T>(_ closure: @escaping @Sendable (any Database) -> EventLoopFuture<T>) -> EventLoopFuture<T> {
        reading.withConnection { closure(GroupCommitDatabase(reading: $0, writer: writer)) }
    }

    private func write(_ work: @escaping @Sendable (any Database) async throws -> Void) -> EventLoopFuture<Void> {
        let context = context
        return eventLoop.makeFutureWithTask { try await writer.perform(context, work) }
    }

    // SQLDatabase

    var logger: Logger { context.logger }
    var eventLoop: any EventLoop { context.eventLoop }
    var version: (any SQLDatabaseReportedVersion)? { readingSQL.version }
    var queryLogLevel: Logger.Level? { readingSQL.queryLogLevel }

    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void) -> EventLoopFuture<Void> {
        guard writes(query) else { return readingSQL.execute(sql: query, onRow) }
        return write { try await ($0 as! any SQLDatabase).execute(sql: query, onRow) }
    }

    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void) async throws {
        try await execute(sql: query, onRow).get()
    }

    func withSession<R>(_ closure: @escaping @Sendable (any SQLDatabase) async throws -> R) async throws -> R {
        try await closure(self)
    }

    /// Whether a statement changes the database; a built statement says so by its kind, other text is read.
    private func writes(_ query: any SQLExpression) -> Bool {
        switch query {
        case is SQLSelect: false
        case is SQLInsert, is SQLUpdate, is SQLDelete: true
        default: Self.writes(serialize(query).sql)
        }
    }

    /// Whether a statement changes the database. Queries, pragmas and `VACUUM INTO` (a copy that reads) run on a
    /// reading connection; they may not run inside the writer's transaction anyway.
    static func writes(_ sql: String) -> Bool {
        let keyword = sql.drop { $0 == " " || $0 == "(" || $0 == "\n" }.prefix { $0.isLetter }.uppercased()
        return !["SELECT", "PRAGMA", "VACUUM", "EXPLAIN"].contains(keyword)
    }
}

/// The one writer. Writes that arrive while a commit is under way wait for the next one, which takes them all
/// (up to `batchLimit`).
actor GroupCommitWriter {
    static let batchLimit = 256

    private let driver: any DatabaseDriver
    private var waiting: [Job] = []
    private var committing = false

    init(driver: any DatabaseDriver) {
        self.driver = driver
    }

    private struct Job: Sendable {
        let context: DatabaseContext
        let work: @Sendable (any Database) async throws -> Void
        let continuation: CheckedContinuation<Void, any Error>
    }

    func perform(_ context: DatabaseContext, _ work: @escaping @Sendable (any Database) async throws -> Void) async throws {
        try await withCheckedThrowingContinuation { continuation in
            waiting.append(Job(context: context, work: work, continuation: continuation))
            if !committing {
                committing = true
                // Detached: the jobs belong to many requests, none of whose task-local values they should see.
                Task.detached { await self.commitWaiting() }
            }
        }
    }

    private func commitWaiting() async {
        while !waiting.isEmpty {
            let batch = Array(waiting.prefix(Self.batchLimit))
            waiting.removeFirst(batch.count)
            await commit(batch)
        }
        committing = false
    }

    /// Runs the batch in one transaction and answers every job once it is committed (or not).
    private func commit(_ batch: [Job]) async {
        let database = driver.makeDatabase(with: batch[0].context)
        var failures: [(any Error)?] = Array(repeating: nil, count: batch.count)
        do {
            failures = try await database.transaction { transaction in
                let sql = transaction as! any SQLDatabase
                let transaction = SQLiteModelQueries(transaction)
                guard batch.count > 1 else {
                    try await batch[0].work(transaction)
                    return [nil]
                }
                var failures: [(any Error)?] = []
                for job in batch {
                    try await sql.raw("SAVEPOINT job").run()
                    do {
                        try await job.work(transaction)
                        failures.append(nil)
                    } catch {
                        try await sql.raw("ROLLBACK TO job").run()
                        failures.append(error)
                    }
                    try await sql.raw("RELEASE job").run()
                }
                return failures
            }
        } catch {
            // The transaction did not commit: a single job's own error, or the commit's for everyone.
            for (index, job) in batch.enumerated() { job.continuation.resume(throwing: failures[index] ?? error) }
            return
        }
        for (index, job) in batch.enumerated() {
            if let failure = failures[index] {
                job.continuation.resume(throwing: failure)
            } else {
                job.continuation.resume()
            }
        }
    }
}

/// Carries a transaction's result out of the writer; written once before the future completes, read once after.
private final class UncheckedBox<T>: @unchecked Sendable {
    var value: T?
}
