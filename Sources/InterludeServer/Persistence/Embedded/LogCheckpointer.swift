import Logging
import NIOCore
import NIOPosix

/// Copies the embedded database's write-ahead log back into its file, on a thread and a connection of its own.
///
/// SQLite copies the log inside the commit that fills it past its limit (`wal_autocheckpoint`): that commit, and
/// every write waiting for the writer behind it, waits for the copy. This copies every `interval` beside the
/// writer, passively: it waits for neither the writer nor a reader, and copies what no reader still needs, with the
/// file synced as the writer syncs it (`synchronous = FULL`). When the writer's own copy comes due, only the pages
/// written since remain for it; its copy is what lets the log start afresh, since a log the writer keeps adding to
/// is never all copied from beside it.
final class LogCheckpointer: Sendable {
    static let interval = TimeAmount.milliseconds(250)

    private let group: MultiThreadedEventLoopGroup
    private let task: RepeatedTask

    init(path: String, generation: SchemaGeneration, every interval: TimeAmount = interval) throws {
        let handle = try SQLiteHandle(path: path, readOnly: false, generation: generation)
        try handle.execute("PRAGMA synchronous = FULL")
        // The thread starts only once the connection is open: a failed open leaves nothing running.
        group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let logger = Logger(label: "interlude.database")
        task = group.next().scheduleRepeatedTask(initialDelay: interval, delay: interval) { _ in
            do {
                try handle.execute("PRAGMA wal_checkpoint(PASSIVE)")
            } catch {
                logger.warning("The database's log could not be copied into its file", metadata: ["error": "\(error)"])
            }
        }
    }

    /// Stops copying; a copy under way completes first.
    func shutdown() {
        task.cancel()
        group.shutdownGracefully { _ in }
    }
}
