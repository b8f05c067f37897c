import NIOConcurrencyHelpers
import Vapor

/// Counts the requests being answered, so that a stopping server finishes them before it closes the database. A
/// client that hung up does not stop its request; without waiting, a request still running when the database
/// closed found none and stopped the process.
final class RequestsInFlight: Sendable {
    private let running = NIOLockedValueBox(0)

    /// How long a stopping server waits for the requests it is answering.
    static let patience: Duration = .seconds(30)

    var count: Int { running.withLockedValue { $0 } }

    /// Counts every request from its arrival until its answer is ready.
    struct Counting: AsyncMiddleware {
        let requests: RequestsInFlight

        func respond(to request: Request, chainingTo next: any AsyncResponder) async throws -> Response {
            requests.running.withLockedValue { $0 += 1 }
            defer { requests.running.withLockedValue { $0 -= 1 } }
            return try await next.respond(to: request)
        }
    }

    /// Waits, when the application stops, until no request is running (or `patience` has passed).
    struct Draining: LifecycleHandler {
        let requests: RequestsInFlight

        func shutdownAsync(_ application: Application) async {
            let clock = ContinuousClock()
            let deadline = clock.now.advanced(by: RequestsInFlight.patience)
            while requests.count > 0, clock.now < deadline {
                try? await clock.sleep(for: .milliseconds(10))
            }
            if requests.count > 0 {
                application.logger.warning("Stopping with \(requests.count) requests still running")
            }
        }
    }
}
