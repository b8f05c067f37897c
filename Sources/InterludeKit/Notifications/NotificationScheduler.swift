import Foundation
import InterludeCore

/// The system's list of pending local notifications, as the scheduler needs it.
public protocol LocalNotificationCenter: Sendable {
    /// The identifiers of the notifications waiting to be shown.
    func pendingIdentifiers() async -> Set<String>
    func add(_ notification: NotificationPlanner.Planned) async throws
    func remove(_ identifiers: [String]) async
}

/// Keeps the system's pending notifications equal to the planner's choice, and records what they did as the prompts'
/// paradata. Plan again on app start, on a change of time zone, after each sync and after each completed
/// questionnaire (`replan()`); tell it when a notification was shown or tapped.
public actor NotificationScheduler {
    private let store: OfflineStore
    private let center: any LocalNotificationCenter
    private let now: @Sendable () -> Date
    private let timeZone: @Sendable () -> TimeZone
    public var planner: NotificationPlanner

    public init(
        store: OfflineStore, center: any LocalNotificationCenter, planner: NotificationPlanner = NotificationPlanner(),
        now: @escaping @Sendable () -> Date = SystemTime.now,
        timeZone: @escaping @Sendable () -> TimeZone = { TimeZone.current }
    ) {
        self.store = store
        self.center = center
        self.planner = planner
        self.now = now
        self.timeZone = timeZone
    }

    /// Changes the planner (quiet hours, budget) and plans again.
    public func update(_ planner: NotificationPlanner) async throws {
        self.planner = planner
        try await replan()
    }

    /// Plans again from the prompts on the device: removes what is no longer wanted, adds what is new, and notes each
    /// new one as planned. Returns the plan.
    @discardableResult
    public func replan() async throws -> [NotificationPlanner.Planned] {
        let at = now()
        let plan = planner.plan(try store.prompts(), now: at, timeZone: timeZone())
        let wanted = Set(plan.map(\.id))
        let pending = await center.pendingIdentifiers().filter(Self.isOwn)
        let obsolete = pending.subtracting(wanted)
        if !obsolete.isEmpty { await center.remove(obsolete.sorted()) }
        for notification in plan where !pending.contains(notification.id) {
            try await center.add(notification)
            try store.recordNotification(.planned, prompt: notification.promptID, at: at)
        }
        return plan
    }

    /// Plans again after every sync of `engine`, so new, moved and answered prompts show at once.
    public func follow(_ engine: SyncEngine) async {
        await engine.onSync { [weak self] _ in _ = try? await self?.replan() }
    }

    /// Plans again whenever the system's time zone changes; keep the token while the app runs.
    public nonisolated func replanOnTimeZoneChange(center: NotificationCenter = .default) -> any NSObjectProtocol {
        center.addObserver(forName: .NSSystemTimeZoneDidChange, object: nil, queue: nil) { [weak self] _ in
            Task { _ = try? await self?.replan() }
        }
    }

    /// The system showed the notification (`willPresent`, or found among the delivered ones).
    public func delivered(_ identifier: String) throws {
        guard let prompt = Self.prompt(of: identifier) else { return }
        try store.recordNotification(.delivered, prompt: prompt, at: now())
    }

    /// The person tapped the notification (`didReceive`).
    public func opened(_ identifier: String) throws {
        guard let prompt = Self.prompt(of: identifier) else { return }
        try store.recordNotification(.delivered, prompt: prompt, at: now())
        try store.recordNotification(.opened, prompt: prompt, at: now())
    }

    /// The prompt a notification identifier of ours names.
    public static func prompt(of identifier: String) -> UUID? {
        let parts = identifier.split(separator: ".")
        guard parts.count == 2, NotificationPlanner.Kind(rawValue: String(parts[1])) != nil else { return nil }
        return UUID(uuidString: String(parts[0]))
    }

    static func isOwn(_ identifier: String) -> Bool { prompt(of: identifier) != nil }
}
