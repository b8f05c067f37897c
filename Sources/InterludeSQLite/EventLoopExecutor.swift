import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// Runs a task's jobs on one event loop. With NIO as the global executor, a task stays on the loop that started
/// it, so tasks meant to run side by side on several cores name their loops with this.
public final class EventLoopExecutor: TaskExecutor {
    public let loop: any EventLoop

    public init(_ loop: any EventLoop) {
        self.loop = loop
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        loop.execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }

    /// The loops of NIO's shared group, one after the other.
    public static func next() -> EventLoopExecutor {
        shared.withLockedValue { shared in
            defer { shared.turn = (shared.turn + 1) % shared.executors.count }
            return shared.executors[shared.turn]
        }
    }

    private static let shared = NIOLockedValueBox(
        (executors: MultiThreadedEventLoopGroup.singleton.makeIterator().map(EventLoopExecutor.init), turn: 0))
}
