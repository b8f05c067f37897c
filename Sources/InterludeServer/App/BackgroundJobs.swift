import Foundation
import Vapor

/// The server's background work: the planner (with message plans, decision points and rules about missed prompts), the
/// notification outbox with its dispatcher and alert escalation, research exports, health data imports, and retention. Inside `serve`
/// each runs on its own timer; `interlude worker` runs both without serving HTTP.
enum BackgroundJobs {
    private struct TasksKey: StorageKey {
        typealias Value = [Task<Void, Never>]
    }

    /// One planner pass; failures are logged and the next pass tries again.
    static func plan(_ app: Application) async {
        let services = app.interlude
        do {
            let report = try await Planner(database: app.db, services: services)
                .runAll(now: services.clock.now)
            if report != Planner.Report() {
                app.logger.info(
                    "Planner: \(report.created) created, \(report.updated) moved, \(report.removed) removed, \(report.expired) expired"
                )
            }
            let now = services.clock.now
            let messages = try await MessagePlanner(database: app.db, services: services).run(now: now)
            let fired = try await RuleService(database: app.db, services: services)
                .evaluateMissed(since: now.addingTimeInterval(-RuleService.missedLookBack))
            let points = try await DecisionPointService(database: app.db, services: services).run()
            if messages > 0 || fired > 0 || points > 0 {
                app.logger.info(
                    "Planner: \(messages) messages planned, \(fired) rules fired for missed prompts, \(points) decision points decided"
                )
            }
        } catch {
            app.logger.error("Planner failed: \(String(describing: error))")
        }
    }

    /// Queues what became due and sends it.
    static func notify(_ app: Application) async {
        let services = app.interlude
        do {
            let now = services.clock.now
            let escalated = try await AlertService(database: app.db, services: services).escalateOverdue()
            if escalated > 0 { app.logger.info("Alerts: \(escalated) escalated") }
            let queued = try await NotificationOutbox(database: app.db, localizer: services.localizer).collect(now: now)
            let report = try await NotificationDispatcher(
                database: app.db, services: services, channels: app.notificationChannels
            ).dispatch(now: now)
            if queued > 0 || report != NotificationDispatcher.Report() {
                app.logger.info(
                    "Notifications: \(queued) queued, \(report.sent) sent, \(report.retrying) to retry, \(report.failed) failed, \(report.withheld) withheld, \(report.expired) expired"
                )
            }
        } catch {
            app.logger.error("Notifications failed: \(String(describing: error))")
        }
    }

    /// Writes the exports and the people's copies of their data that wait, and removes those past their time.
    static func export(_ app: Application) async {
        let service = ExportService(database: app.db, services: app.interlude)
        let copies = SelfExportService(database: app.db, services: app.interlude)
        do {
            let written = try await service.runPending()
            let removed = try await service.sweep()
            if written > 0 || removed > 0 { app.logger.info("Exports: \(written) written, \(removed) expired") }
            let copied = try await copies.runPending()
            let gone = try await copies.sweep()
            if copied > 0 || gone > 0 { app.logger.info("Copies of personal data: \(copied) written, \(gone) removed") }
        } catch {
            app.logger.error("Exports failed: \(String(describing: error))")
        }
    }

    /// Reads the health data files people uploaded.
    static func importHealth(_ app: Application) async {
        do {
            let read = try await HealthImportService(database: app.db, services: app.interlude).runPending()
            if read > 0 { app.logger.info("Health imports: \(read) read") }
        } catch {
            app.logger.error("Health imports failed: \(String(describing: error))")
        }
    }

    /// How often the retention job looks for what is past its period.
    static let retentionInterval = 3600

    /// Deletes by age what has served its purpose.
    static func retain(_ app: Application) async {
        do {
            let report = try await Retention(database: app.db, services: app.interlude).run()
            if report != Retention.Report() {
                app.logger.info(
                    "Retention: \(report.sessions) sessions, \(report.emailTokens) email links, \(report.accessTokens) access tokens, \(report.rateLimitEvents) rate-limit counts, \(report.syncMutations) sync answers, \(report.outboxFiles) outbox files, \(report.auditEvents) audit events and \(report.abandonedImports) abandoned uploads deleted; \(report.notificationTexts) notification texts cleared"
                )
            }
        } catch {
            app.logger.error("Retention failed: \(String(describing: error))")
        }
    }

    /// Runs `job` every `interval` seconds until cancelled.
    static func repeatEvery(_ interval: Int, _ job: @escaping @Sendable () async -> Void) async {
        while !Task.isCancelled {
            await job()
            try? await Task.sleep(for: .seconds(interval))
        }
    }

    /// Starts the jobs in the background of a serving process; they stop with the application.
    static func start(in app: Application) {
        let settings = app.interlude.settings
        var tasks: [Task<Void, Never>] = []
        if settings.plannerInterval > 0 {
            tasks.append(Task { await repeatEvery(settings.plannerInterval) { await plan(app) } })
        }
        if settings.push.dispatchInterval > 0 {
            tasks.append(Task { await repeatEvery(settings.push.dispatchInterval) { await notify(app) } })
        }
        if settings.exportInterval > 0 {
            tasks.append(Task { await repeatEvery(settings.exportInterval) { await export(app) } })
            tasks.append(Task { await repeatEvery(settings.exportInterval) { await importHealth(app) } })
        }
        if settings.plannerInterval > 0 {
            tasks.append(Task { await repeatEvery(retentionInterval) { await retain(app) } })
        }
        guard !tasks.isEmpty else { return }
        app.storage[TasksKey.self] = tasks
        app.lifecycle.use(Stopper())
    }

    /// Stops the jobs and waits for a pass under way to end: it still uses the database, which closes next.
    private struct Stopper: LifecycleHandler {
        func shutdownAsync(_ app: Application) async {
            let tasks = app.storage[TasksKey.self] ?? []
            for task in tasks { task.cancel() }
            for task in tasks { await task.value }
        }
    }
}

/// `interlude worker`: plans and sends notifications without serving HTTP, for a deployment that runs jobs apart
/// from web servers.
struct WorkerCommand: AsyncCommand {
    struct Signature: CommandSignature {}

    var help: String {
        "Runs the background jobs (planner, notifications, exports, health imports, retention) without serving HTTP."
    }

    func run(using context: CommandContext, signature: Signature) async throws {
        let app = context.application
        try await migrate(app)
        try await InstallationKeys(
            database: app.db, services: app.interlude, vapidPublicKey: app.notificationChannels.vapidPublicKey
        )
        .verify()
        let settings = app.interlude.settings
        let planEvery = max(settings.plannerInterval, 1)
        let notifyEvery = max(settings.push.dispatchInterval, 1)
        let exportEvery = max(settings.exportInterval, 1)
        context.console.print(
            "Worker running; planning every \(planEvery) s, sending notifications every \(notifyEvery) s. Stop with Ctrl-C."
        )
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await BackgroundJobs.repeatEvery(planEvery) { await BackgroundJobs.plan(app) } }
            group.addTask { await BackgroundJobs.repeatEvery(notifyEvery) { await BackgroundJobs.notify(app) } }
            group.addTask { await BackgroundJobs.repeatEvery(exportEvery) { await BackgroundJobs.export(app) } }
            group.addTask { await BackgroundJobs.repeatEvery(exportEvery) { await BackgroundJobs.importHealth(app) } }
            group.addTask {
                await BackgroundJobs.repeatEvery(BackgroundJobs.retentionInterval) { await BackgroundJobs.retain(app) }
            }
        }
    }
}
