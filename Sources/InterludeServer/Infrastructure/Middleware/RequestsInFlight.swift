import NIOConcurrencyHelpers
import Vapor

/// Counts the requests being answered, so that a stopping server finishes them before it closes the database. A
/// client that hung up does not stop its request; without waiting, a request still running when the database
/// closed found none and stopped the process.
final class RequestsInFlight: Sendable {
    private let running = NIOLockedValueBox(0)

    /// How long a stopping server waits for its connections and the requests it is answering.
    static let patience: Duration = .seconds(30)

    var count: Int { running.withLockedValue { $0 } }

    /// Counts every request from its arrival until its answer is ready. It is a future-based middleware on purpose:
    /// the count rises on the event loop that read the request, before its connection can be seen closed, where an
    /// async middleware would count it only once its task had started.
    struct Counting: Middleware {
        let requests: RequestsInFlight

        func respond(to request: Request, chainingTo next: any Responder) -> EventLoopFuture<Response> {
            requests.running.withLockedValue { $0 += 1 }
            return next.respond(to: request).always { _ in
                requests.running.withLockedValue { $0 -= 1 }
            }
        }
    }

    /// Stops the HTTP server when the application stops, then waits until no request is running (or `patience` has
    /// passed). The server stops first so that no request can begin once the count reached zero: it takes no new
    /// connection and closes each open one after the answer it is writing.
    struct Draining: LifecycleHandler {
        let requests: RequestsInFlight

        func shutdownAsync(_ application: Application) async {
            let clock = ContinuousClock()
            let deadline = clock.now.advanced(by: RequestsInFlight.patience)
            await application.server.shutdown()
            while requests.count > 0, clock.now < deadline {
                try? await clock.sleep(for: .milliseconds(10))
            }
            if requests.count > 0 {
                application.logger.warning("Stopping with \(requests.count) requests still running")
            }
        }
    }
}
