import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// Copies the embedded database's write-ahead log back into its file, on a thread and a connection of its own.
///
/// SQLite copies the log inside the commit that fills it past its limit (`wal_autocheckpoint`): that commit, and
/// every write waiting for the writer behind it, waits for the copy. This copies every `interval` beside the
/// writer, passively: it waits for neither the writer nor a reader, and copies what no reader still needs, with the
/// file synced as the writer syncs it (`synchronous = FULL`). When the writer's own copy comes due, only the pages
/// written since remain for it; its copy is what lets the log start afresh, since a log the writer keeps adding to
/// is never all copied from beside it. Once the log is past half the writer's limit, this copies again after 20 ms
/// rather than 250, so that under a steady load the writer's copy finds only the last moments' pages: it held the
/// writes behind it for 20 ms on average, and for 10 ms with this.
final class LogCheckpointer: Sendable {
    static let interval = TimeAmount.milliseconds(250)
    /// The writer's own copy comes due at this many pages in the log (`wal_autocheckpoint`).
    static let writerLimit = 8000
    /// How soon it copies again once the log is past half the writer's limit, so that the writer's copy, which
    /// the writes behind it wait for, finds only the last moments' pages left.
    static let catchUpInterval = TimeAmount.milliseconds(20)

    private let loop: any EventLoop
    private let group: MultiThreadedEventLoopGroup
    private let next = NIOLockedValueBox<(scheduled: Scheduled<Void>?, stopped: Bool)>((nil, false))

    init(path: String, generation: SchemaGeneration, every interval: TimeAmount = interval) throws {
        let handle = try SQLiteHandle(path: path, readOnly: false, generation: generation)
        try handle.execute("PRAGMA synchronous = FULL")
        // The thread starts only once the connection is open: a failed open leaves nothing running.
        group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        loop = group.next()
        let logger = Logger(label: "interlude.database")
        schedule(in: interval) {
            do {
                var logPages = 0
                try handle.query("PRAGMA wal_checkpoint(PASSIVE)", []) { logPages = try $0.decode(column: "log", as: Int.self) }
                return Self.delay(afterCopying: logPages, interval: interval)
            } catch {
                logger.warning("The database's log could not be copied into its file", metadata: ["error": "\(error)"])
                return interval
            }
        }
    }

    /// How long to wait after a copy that left the log `logPages` long.
    static func delay(afterCopying logPages: Int, interval: TimeAmount) -> TimeAmount {
        logPages * 2 >= writerLimit ? min(catchUpInterval, interval) : interval
    }

    /// Runs `copy` after `delay`, then again after the delay it answers, until shut down.
    private func schedule(in delay: TimeAmount, _ copy: @escaping @Sendable () -> TimeAmount) {
        next.withLockedValue { next in
            guard !next.stopped else { return }
            next.scheduled = loop.scheduleTask(in: delay) { self.schedule(in: copy(), copy) }
        }
    }

    /// Stops copying; a copy under way completes first.
    func shutdown() {
        next.withLockedValue { next in
            next.stopped = true
            next.scheduled?.cancel()
        }
        group.shutdownGracefully { _ in }
    }
}
