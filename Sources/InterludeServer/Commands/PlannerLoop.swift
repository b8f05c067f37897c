import Foundation
import Vapor

/// Runs the planner every few seconds: inside `serve` as a background task, or alone as `interlude worker`.
enum PlannerLoop {
    private struct TaskKey: StorageKey {
        typealias Value = Task<Void, Never>
    }

    /// One planner pass now; failures are logged and the next pass tries again.
    static func pass(_ app: Application) async {
        let services = app.interlude
        do {
            let report = try await Planner(database: app.db, horizonDays: services.settings.plannerHorizonDays)
                .runAll(now: services.clock.now)
            if report != Planner.Report() {
                app.logger.info(
                    "Planner: \(report.created) created, \(report.updated) moved, \(report.removed) removed, \(report.expired) expired")
            }
        } catch {
            app.logger.error("Planner failed: \(String(describing: error))")
        }
    }

    /// Runs `pass` every `interval` seconds until cancelled.
    static func run(_ app: Application, interval: Int) async {
        while !Task.isCancelled {
            await pass(app)
            try? await Task.sleep(for: .seconds(interval))
        }
    }

    /// Starts the loop in the background of a serving process; it stops with the application.
    static func start(in app: Application) {
        let interval = app.interlude.settings.plannerInterval
        guard interval > 0 else { return }
        app.storage[TaskKey.self] = Task { await run(app, interval: interval) }
        app.lifecycle.use(Stopper())
    }

    private struct Stopper: LifecycleHandler {
        func shutdownAsync(_ app: Application) async {
            app.storage[TaskKey.self]?.cancel()
        }
    }
}

/// `interlude worker`: plans without serving HTTP, for a deployment that runs jobs apart from web servers.
struct WorkerCommand: AsyncCommand {
    struct Signature: CommandSignature {}

    var help: String { "Runs the background jobs (the prompt planner) without serving HTTP." }

    func run(using context: CommandContext, signature: Signature) async throws {
        let app = context.application
        try await migrate(app)
        let interval = max(app.interlude.settings.plannerInterval, 1)
        context.console.print("Worker running; planning every \(interval) seconds. Stop with Ctrl-C.")
        await PlannerLoop.run(app, interval: interval)
    }
}
