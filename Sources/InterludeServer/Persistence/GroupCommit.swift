import NIOCore
import NIOPosix

/// The embedded database's one writer. Left to themselves, concurrent requests would wait for each other's write
/// lock, and each would pay its own flush to disk.
///
/// Here the writes waiting for the writer run in one transaction, each in a savepoint of its own (so one failing
/// write rolls back alone), and are committed together: one flush for all of them. A write's caller hears back
/// only after that commit, so an acknowledged write is durable (`synchronous=FULL`). Writes that arrive while a
/// commit is under way wait for the next one, which takes them all (up to `batchLimit`).
actor GroupCommitWriter {
    static let batchLimit = 256

    private let handle: SQLiteHandle
    private let threadPool: NIOThreadPool
    private var waiting: [Job] = []
    private var committing = false

    init(handle: SQLiteHandle, threadPool: NIOThreadPool) {
        self.handle = handle
        self.threadPool = threadPool
    }

    private struct Job: Sendable {
        let work: @Sendable (SQLiteHandle) async throws -> Void
        let continuation: CheckedContinuation<Void, any Error>
    }

    /// Runs `work` inside the next transaction, on the writer's connection, and returns once it is committed.
    func perform(_ work: @escaping @Sendable (SQLiteHandle) async throws -> Void) async throws {
        try await withCheckedThrowingContinuation { continuation in
            waiting.append(Job(work: work, continuation: continuation))
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
        var failures: [(any Error)?] = []
        do {
            try handle.execute("BEGIN IMMEDIATE")
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
            // The commit waits for the disk: away from the thread, which serves requests meanwhile.
            let handle = handle
            try await threadPool.runIfActive { try handle.execute("COMMIT") }
        } catch {
            // Nothing was committed: a job's own error, or the transaction's for the others.
            try? handle.execute("ROLLBACK")
            for (index, job) in batch.enumerated() {
                job.continuation.resume(throwing: (index < failures.count ? failures[index] : nil) ?? error)
            }
            return
        }
        for (job, failure) in zip(batch, failures) {
            if let failure {
                job.continuation.resume(throwing: failure)
            } else {
                job.continuation.resume()
            }
        }
    }
}
