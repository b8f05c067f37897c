import Foundation
import InterludeCore
import Testing

@testable import InterludeKit

/// The system's pending notifications, kept in memory as the operating system would keep them.
final class PendingNotifications: LocalNotificationCenter, @unchecked Sendable {
    private let lock = NSLock()
    private var pending: [String: NotificationPlanner.Planned] = [:]
    private(set) var added = 0

    var identifiers: Set<String> { lock.withLock { Set(pending.keys) } }

    func pendingIdentifiers() async -> Set<String> { identifiers }

    func add(_ notification: NotificationPlanner.Planned) async throws {
        lock.withLock {
            pending[notification.id] = notification
            added += 1
        }
    }

    func remove(_ identifiers: [String]) async {
        lock.withLock { for identifier in identifiers { pending[identifier] = nil } }
    }

    /// One the app put there itself, which the scheduler must leave alone.
    func addForeign(_ identifier: String) {
        lock.withLock {
            pending[identifier] = NotificationPlanner.Planned(
                id: identifier, promptID: UUID(), kind: .prompt, title: "", fireAt: Date(),
                local: LocalDateTime("2026-01-01T00:00")!,
                closesAt: Date())
        }
    }
}

@Suite("Notification scheduler")
struct NotificationSchedulerTests {
    @Test(
        "keeps the system's list equal to the plan, leaves the app's own alone, and records planned, delivered and opened once"
    )
    func replans() async throws {
        let store = try OfflineStore.inMemory()
        let now = Date(timeIntervalSince1970: 1_780_000_000)
        let soon = OfflineStoreTests.prompt(opensAt: now.addingTimeInterval(3600), hours: 3)
        let later = OfflineStoreTests.prompt(opensAt: now.addingTimeInterval(86_400), hours: 0.5)
        try store.apply(OfflineStoreTests.changes([soon, later]), etag: "e")
        let center = PendingNotifications()
        center.addForeign("birthday-greeting")
        let scheduler = NotificationScheduler(
            store: store, center: center, now: { now }, timeZone: { TimeZone(identifier: "Europe/Vienna")! })
        let plan = try await scheduler.replan()
        #expect(
            Set(plan.map(\.id)) == [
                "\(Wire.id(soon.id)).prompt", "\(Wire.id(soon.id)).reminder", "\(Wire.id(later.id)).prompt",
            ])
        #expect(center.identifiers == Set(plan.map(\.id)).union(["birthday-greeting"]))
        // Planning again changes nothing and adds nothing.
        try await scheduler.replan()
        #expect(center.added == 3)
        // Once the first is answered, its notifications go; the others stay.
        try QuestionnaireSessionLike.complete(soon, in: store, at: now)
        try await scheduler.replan()
        #expect(center.identifiers == ["\(Wire.id(later.id)).prompt", "birthday-greeting"])
        try await scheduler.delivered("\(Wire.id(later.id)).prompt")
        try await scheduler.opened("\(Wire.id(later.id)).prompt")
        try await scheduler.opened("birthday-greeting")
        #expect(try store.notificationEvents(for: later.id) == [.planned: now, .delivered: now, .opened: now])
        let events = try store.pending().compactMap { pending -> DeviceNotificationEvent? in
            if case .notification(let prompt, let event, _) = pending.change, prompt == later.id { return event }
            return nil
        }
        #expect(events == [.planned, .delivered, .opened])
    }
}

extension NotificationSchedulerTests {
    @Test("a change of time zone plans again, in the new zone")
    func timeZoneChange() async throws {
        let store = try OfflineStore.inMemory()
        let now = Date(timeIntervalSince1970: 1_780_000_000)
        try store.apply(
            OfflineStoreTests.changes([OfflineStoreTests.prompt(opensAt: now.addingTimeInterval(3600), hours: 0.5)]),
            etag: "e")
        let center = PendingNotifications()
        let zone = ZoneSetting()
        let scheduler = NotificationScheduler(store: store, center: center, now: { now }, timeZone: { zone.current })
        let system = NotificationCenter()
        let token = scheduler.replanOnTimeZoneChange(center: system)
        defer { system.removeObserver(token) }
        #expect(center.identifiers.isEmpty)
        zone.current = TimeZone(identifier: "America/New_York")!
        system.post(name: .NSSystemTimeZoneDidChange, object: nil)
        for _ in 0..<200 where center.identifiers.isEmpty { try await Task.sleep(for: .milliseconds(10)) }
        #expect(center.identifiers.count == 1)
        let plan = try await scheduler.replan()
        #expect(plan.first.map { "\($0.local)" } == "\(LocalDateTime(now.addingTimeInterval(3600), in: zone.current))")
    }
}

/// The zone the device is in, changed by the test.
final class ZoneSetting: @unchecked Sendable {
    private let lock = NSLock()
    private var zone = TimeZone(identifier: "Europe/Vienna")!
    var current: TimeZone {
        get { lock.withLock { zone } }
        set { lock.withLock { zone = newValue } }
    }
}

/// Completes a prompt on the device as answering it would.
enum QuestionnaireSessionLike {
    static func complete(_ prompt: Prompt, in store: OfflineStore, at now: Date) throws {
        try store.enqueue(
            .response(
                ResponseSubmission(
                    promptID: prompt.id, instrumentKey: prompt.instrumentKey, version: prompt.instrumentVersion,
                    answers: [:],
                    startedAt: nil, completedAt: now)), at: now)
    }
}
