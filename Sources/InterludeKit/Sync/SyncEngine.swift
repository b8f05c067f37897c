import Foundation
import InterludeCore

/// Brings the device and the server together: first sends what waits in the outbox (each change under its own id, so
/// a retry after a lost answer applies it once), then pulls what changed since the last cursor (with its ETag, so an
/// unchanged state costs one small reply). One run at a time: asking while a run is under way joins that run.
public actor SyncEngine {
    /// What one run did.
    public struct Report: Sendable {
        /// Changes the server took (or had taken before).
        public var applied = 0
        /// Changes held until the person answers a study's new consent version.
        public var waiting = 0
        /// Changes the server did not apply because their base moved on; kept in the store for the app to settle.
        public var conflicts: [SyncConflict] = []
        /// Changes refused, with the reason; kept in the store for the person to see.
        public var refused = 0
        /// Changes naming data erased at the person's request; their local copies are gone.
        public var erased = 0
        /// Whether the pull brought anything: a full picture, or any change.
        public var changed = false
    }

    private let client: InterludeClient
    private let store: OfflineStore
    private let now: @Sendable () -> Date
    private var running: Task<Report, any Error>?
    private var timer: Task<Void, Never>?
    private var online = true
    private var observers: [@Sendable (Report) async -> Void] = []

    /// The largest batch `POST /sync` takes.
    static let batchSize = 200

    public init(client: InterludeClient, store: OfflineStore, now: @escaping @Sendable () -> Date = SystemTime.now) {
        self.client = client
        self.store = store
        self.now = now
    }

    /// Called after every run that finished, e.g. to plan notifications again.
    public func onSync(_ observer: @escaping @Sendable (Report) async -> Void) {
        observers.append(observer)
    }

    /// Runs now, or joins the run under way.
    @discardableResult
    public func sync() async throws -> Report {
        if let running { return try await running.value }
        let task = Task { try await self.run() }
        running = task
        defer { running = nil }
        let report = try await task.value
        for observer in observers { await observer(report) }
        return report
    }

    /// Runs every `interval` while online, until `stop()`.
    public func start(every interval: Duration) {
        timer?.cancel()
        timer = Task { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                guard let self, await self.online else { continue }
                _ = try? await self.sync()
            }
        }
    }

    public func stop() {
        timer?.cancel()
        timer = nil
    }

    /// Tells the engine the network came or went; coming back runs a sync at once.
    public func connectivityChanged(online: Bool) async {
        let cameBack = online && !self.online
        self.online = online
        if cameBack { _ = try? await sync() }
    }

    /// Settles a conflict: `keepServer` drops the device's change; otherwise it is sent again on top of the server's
    /// version (recreated when the server's copy is gone).
    public func resolve(_ conflict: SyncConflict, keepServer: Bool) async throws {
        if !keepServer, let change = Self.rebase(conflict.local, on: conflict.server) {
            try store.enqueue(change, at: now())
        }
        try store.removeConflict(conflict.id)
    }

    static func rebase(_ change: Change, on server: SyncConflict.ServerVersion) -> Change? {
        switch (change, server) {
        case (.updateAppointment(let id, _, let draft), .appointment(let current)):
            return .updateAppointment(id: id, baseVersion: current.version, draft)
        case (.updateAppointment(let id, _, let draft), .deleted):
            return .createAppointment(id: id, draft)
        case (.deleteAppointment(let id, _), .appointment(let current)):
            return .deleteAppointment(id: id, baseVersion: current.version)
        case (.updateRecord(let kind, let id, _, let body), .record(let current)):
            return .updateRecord(kind, id: id, baseVersion: current.version ?? 0, body: body)
        case (.updateRecord(let kind, let id, _, let body), .deleted):
            return .createRecord(kind, id: id, body: body)
        case (.deleteRecord(let kind, let id, _), .record(let current)):
            return .deleteRecord(kind, id: id, baseVersion: current.version ?? 0)
        default:
            return nil
        }
    }

    private func run() async throws -> Report {
        var report = Report()
        // Changes held for a consent answer stay at the front; the rest are sent after them in order.
        var sent: Set<UUID> = []
        while true {
            let batch = try store.pending().filter { !sent.contains($0.id) }.prefix(Self.batchSize)
            guard !batch.isEmpty else { break }
            let outcomes = try await client.push(batch.map { ($0.id, $0.change) })
            try store.settle(Array(zip(batch, outcomes)))
            for (pending, outcome) in zip(batch, outcomes) {
                sent.insert(pending.id)
                switch outcome {
                case .applied: report.applied += 1
                case .waiting: report.waiting += 1
                case .conflict(let server):
                    report.conflicts.append(SyncConflict(id: pending.id, local: pending.change, server: server))
                case .rejected: report.refused += 1
                case .erased: report.erased += 1
                }
            }
        }
        let (cursor, etag) = try store.cursor
        switch try await client.pull(since: cursor, etag: etag) {
        case .notModified:
            break
        case .changes(let changes, let etag):
            try store.apply(changes, etag: etag)
            report.changed = changes.full || !changes.isEmpty
        }
        return report
    }
}
