import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// Copies the embedded database's write-ahead log back into its file beside the writer, so that no commit waits for
/// the copy.
///
/// Left to itself, SQLite copies the log inside the commit that fills it past its limit (`wal_autocheckpoint`), and
/// that commit, with every write waiting for the writer behind it, waits for the whole copy: under load, tens of
/// milliseconds several times a second. Here the writer reports the log's length after each commit (`logGrew(to:)`),
/// and every `step` pages the copier copies what was written since, on a thread and a connection of its own, and
/// flushes the file; it waits for neither the writer nor a reader.
///
/// Only a log copied whole starts afresh, and a log the writer keeps adding to is seldom copied whole from beside it.
/// So once the log is past `limit`, the copier copies once more, and after that copy the writer copies what remains
/// itself (`copyRemainder(on:)`), between two commits and after answering the writes of the first: the pages
/// committed while the copier copied, into a file already flushed. Its next commit then writes the log from the
/// start (unless a reader still reads the old log's end; the copier and the writer then go on as before).
final class LogCheckpointer: Sendable {
    /// The log's length, in pages, past which it is copied whole and started afresh (32 MB): the pages every write
    /// touches (a table's last leaf, its indexes) are copied once per step however often they changed.
    static let limit = 8000
    /// How many pages the writer adds before the copier copies them.
    static let step = 1000

    private let limit: Int
    private let step: Int
    private let handle: SQLiteHandle
    private let group: MultiThreadedEventLoopGroup
    private let state = NIOLockedValueBox(State())
    private let logger = Logger(label: "interlude.database")

    private struct State {
        /// The log's length after the last commit.
        var length = 0
        /// The log's length when the copier was last asked to copy.
        var asked = 0
        /// Whether a copy is asked for and not yet started.
        var pending = false
        /// Whether a copy that started with the log past its limit ended since the writer last copied.
        var caughtUp = false
        /// Whether copying stopped, for good.
        var stopped = false
    }

    init(path: String, generation: SchemaGeneration, limit: Int = limit, step: Int = step) throws {
        handle = try SQLiteHandle(path: path, readOnly: false, generation: generation)
        try handle.execute("PRAGMA synchronous = FULL")
        self.limit = limit
        self.step = step
        // The thread starts only once the connection is open: a failed open leaves nothing running.
        group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    }

    /// Called by the writer after each commit with the log's length in pages; asks the copier to copy every `step`.
    func logGrew(to length: Int) {
        state.withLockedValue { state in
            // A shorter log was started afresh.
            if length < state.asked { state.asked = 0 }
            state.length = length
            // And once more as soon as the log is past its limit, for the writer's copy to follow.
            let due = length - state.asked >= step || (length >= limit && state.asked < limit)
            guard due, !state.pending, !state.stopped else { return }
            state.asked = length
            state.pending = true
            // Asked under the lock, so that no copy is asked for once `shutdown` stopped the thread.
            group.next().execute { self.copy() }
        }
    }

    /// On the writer's connection, between two commits: once the log is past its limit and the copier has copied
    /// it since, copies what remains. A copy under way beside it makes this a no-op until the copier's next copy.
    func copyRemainder(on writer: SQLiteHandle) {
        let due = state.withLockedValue { state in
            defer { state.caughtUp = false }
            return state.caughtUp && state.length >= limit
        }
        guard due else { return }
        do {
            _ = try writer.checkpoint()
        } catch {
            logger.warning("The database's log could not be copied into its file", metadata: ["error": "\(error)"])
        }
    }

    private func copy() {
        let pastLimit = state.withLockedValue { state in
            state.pending = false
            return state.length >= limit
        }
        do {
            // Flushed here, the pages cost the writer's own copy nothing to flush.
            if try handle.checkpoint() { try handle.syncFile() }
        } catch {
            logger.warning("The database's log could not be copied into its file", metadata: ["error": "\(error)"])
        }
        if pastLimit { state.withLockedValue { $0.caughtUp = true } }
    }

    /// Stops copying; a copy under way completes first.
    func shutdown() {
        state.withLockedValue { $0.stopped = true }
        group.shutdownGracefully { _ in }
    }
}
