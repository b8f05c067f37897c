import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// The embedded database's one writer. Left to themselves, concurrent requests would wait for each other's write
/// lock, and each would pay its own flush to disk.
///
/// Here the writes waiting for the writer run in one transaction, each in a savepoint of its own (so one failing
/// write rolls back alone), and are committed together: one flush for all of them. A write's caller hears back
/// only after that commit, so an acknowledged write is durable (`synchronous=FULL`). Writes that arrive while a
/// commit is under way wait for the next one, which takes them all (up to `batchLimit`).
///
/// The writer has a thread of its own: the writes, every statement they wait for, and the commit run there, so
/// a busy server's requests never stand between a write and its next statement, and requests never wait while
/// the commit waits for the disk.
final class GroupCommitWriter: Sendable {
    static let batchLimit = 256

    private let handle: SQLiteHandle
    private let thread: WriterThread
    private let state = NIOLockedValueBox(State())
    private let afterCommit: @Sendable (SQLiteHandle) -> Void

    private struct State {
        var waiting: [Job] = []
        var committing = false
    }

    private struct Job: Sendable {
        let work: @Sendable (SQLiteHandle) async throws -> Void
        let finish: @Sendable (Result<Void, any Error>) -> Void
    }

    /// `afterCommit`: runs on the writer's connection after each batch is committed and answered, before the next.
    init(handle: SQLiteHandle, afterCommit: @escaping @Sendable (SQLiteHandle) -> Void) {
        self.handle = handle
        self.thread = WriterThread()
        self.afterCommit = afterCommit
    }

    /// Runs `work` inside the next transaction, on the writer's connection, and returns once it is committed.
    func perform<T: Sendable>(_ work: @escaping @Sendable (SQLiteHandle) async throws -> T) async throws -> T {
        let result = ResultBox<T>()
        try await withCheckedThrowingContinuation { continuation in
            enqueue(Job(work: { result.value = try await work($0) }, finish: { continuation.resume(with: $0) }))
        }
        return result.value!
    }

    /// Runs `work` inside the next transaction and completes `promise` once it is committed.
    func perform(
        _ work: @escaping @Sendable (SQLiteHandle) async throws -> Void, completing promise: EventLoopPromise<Void>
    ) {
        enqueue(Job(work: work, finish: { promise.completeWith($0) }))
    }

    /// Stops the writer's thread once the writes handed to it are done.
    func shutdown() {
        thread.shutdown()
    }

    private func enqueue(_ job: Job) {
        let starts = state.withLockedValue { state in
            state.waiting.append(job)
            defer { state.committing = true }
            return !state.committing
        }
        // Detached: the jobs belong to many requests, none of whose task-local values they should see.
        if starts { Task.detached(executorPreference: thread.executor) { await self.commitWaiting() } }
    }

    private func commitWaiting() async {
        while let batch = nextBatch() {
            await commit(batch)
            afterCommit(handle)
        }
    }

    private func nextBatch() -> [Job]? {
        state.withLockedValue { state in
            guard !state.waiting.isEmpty else {
                state.committing = false
                return nil
            }
            let batch = Array(state.waiting.prefix(Self.batchLimit))
            state.waiting.removeFirst(batch.count)
            return batch
        }
    }

    /// Runs the batch in one transaction and answers every job once it is committed (or not).
    private func commit(_ batch: [Job]) async {
        var failures: [(any Error)?] = []
        do {
            try handle.execute("BEGIN IMMEDIATE")
            if batch.count == 1 {
                // Alone, a write needs no savepoint: its failure rolls back the transaction, which is only its own.
                try await batch[0].work(handle)
                failures.append(nil)
            } else {
                for job in batch {
                    try handle.execute("SAVEPOINT job")
                    do {
                        try await job.work(handle)
                        failures.append(nil)
                    } catch {
                        try handle.execute("ROLLBACK TO job")
                        failures.append(error)
                    }
                    try handle.execute("RELEASE job")
                }
            }
            try handle.execute("COMMIT")
        } catch {
            // Nothing was committed: a job's own error, or the transaction's for the others.
            try? handle.execute("ROLLBACK")
            for (index, job) in batch.enumerated() {
                job.finish(.failure((index < failures.count ? failures[index] : nil) ?? error))
            }
            return
        }
        for (job, failure) in zip(batch, failures) {
            job.finish(failure.map { .failure($0) } ?? .success(()))
        }
    }
}

/// The writer's thread: an event loop of its own, so the futures a write waits for complete on it too.
private final class WriterThread: Sendable {
    private let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    let executor: EventLoopExecutor

    init() {
        executor = EventLoopExecutor(group.any())
    }

    func shutdown() {
        group.shutdownGracefully { _ in }
    }
}

/// Carries a write's result out of the writer; written once before its caller resumes, read once after.
final class ResultBox<T>: @unchecked Sendable {
    var value: T?
}
