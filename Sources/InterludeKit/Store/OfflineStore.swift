import Crypto
import Foundation
import GRDB
import InterludeCore

/// Everything the app needs without a connection, in one SQLite database: prompts with their questionnaires,
/// drafts (every answer kept the moment it is given), changes waiting to be sent, appointments, interventions (with
/// the person's own answers, which never leave the device), health records, and conflicts to show. What a person
/// wrote is sealed with AES-GCM; the key lives in the keychain on Apple platforms.
public final class OfflineStore: Sendable {
    let database: any DatabaseWriter
    let sealer: TextSealer

    /// Opens (or creates) the store in `directory`, by default the app's Application Support folder, which the system
    /// never clears the way it clears caches.
    public convenience init(directory: URL? = nil, keyStore: (any KeyStore)? = nil) throws {
        let directory = try directory ?? StoreLocation.defaultDirectory()
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let keys = keyStore ?? StoreLocation.defaultKeyStore(in: directory)
        var configuration = Configuration()
        configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA synchronous = FULL") }
        let pool = try DatabasePool(
            path: directory.appendingPathComponent("interlude.sqlite").path, configuration: configuration)
        try self.init(database: pool, key: keys.key())
    }

    /// A store in memory, for tests and previews.
    public static func inMemory(key: SymmetricKey = SymmetricKey(size: .bits256)) throws -> OfflineStore {
        try OfflineStore(database: DatabaseQueue(), key: key)
    }

    init(database: any DatabaseWriter, key: SymmetricKey) throws {
        self.database = database
        sealer = TextSealer(key: key)
        try StoreSchema.migrator.migrate(database)
    }

    // MARK: Prompts and questionnaires

    /// The prompts on the device, by deadline.
    public func prompts() throws -> [Prompt] {
        try database.read { db in
            try Data.fetchAll(db, sql: "SELECT body FROM prompt ORDER BY closes_at, id").map {
                try JSONDecoder().decode(Prompt.self, from: $0)
            }
        }
    }

    public func prompt(_ id: UUID) throws -> Prompt? {
        try database.read { db in
            try Data.fetchOne(db, sql: "SELECT body FROM prompt WHERE id = ?", arguments: [id.uuidString])
                .map { try JSONDecoder().decode(Prompt.self, from: $0) }
        }
    }

    /// The questionnaire version a prompt needs, when the device has it.
    public func definition(key: String, version: Int) throws -> InstrumentDefinition? {
        try database.read { db in
            try Data.fetchOne(
                db, sql: "SELECT body FROM definition WHERE key = ? AND version = ?", arguments: [key, version]
            )
            .map { try JSONDecoder().decode(InstrumentDefinition.self, from: $0) }
        }
    }

    /// The answers given so far to a prompt, with when the first was given and the time spent per item.
    public func draft(for promptID: UUID) throws -> Draft? {
        try database.read { db in
            try Row.fetchOne(
                db, sql: "SELECT answers, started_at, item_times FROM draft WHERE prompt_id = ?",
                arguments: [promptID.uuidString]
            )
            .map { row in
                Draft(
                    answers: try sealer.open(row["answers"], as: Answers.self), startedAt: row["started_at"],
                    itemTimesMs: Self.itemTimes(row["item_times"]))
            }
        }
    }

    /// The answers so far, the moment of the first, and the milliseconds spent on each item: from the answer before
    /// (none for the first) to this item's answer, summed over its changes.
    public struct Draft: Hashable, Sendable {
        public var answers: Answers
        public var startedAt: Date
        public var itemTimesMs: [String: Int]
    }

    /// Keeps one answer at once (nil removes it), so nothing is lost when the app is closed mid-questionnaire.
    public func saveAnswer(_ value: AnswerValue?, item: String, prompt promptID: UUID, at now: Date) throws {
        try database.write { db in
            let row = try Row.fetchOne(
                db, sql: "SELECT answers, started_at, updated_at, item_times FROM draft WHERE prompt_id = ?",
                arguments: [promptID.uuidString])
            var answers = try row.map { try sealer.open($0["answers"], as: Answers.self) } ?? [:]
            answers[item] = value
            var times = Self.itemTimes(row?["item_times"])
            if let previous: Date = row?["updated_at"] {
                let spent = Int((now.timeIntervalSince(previous) * 1000).rounded())
                times[item, default: 0] = min(times[item, default: 0] + max(spent, 0), Self.longestItemTime)
            }
            try db.execute(
                sql: """
                    INSERT INTO draft (prompt_id, answers, started_at, updated_at, item_times) VALUES (?, ?, ?, ?, ?)
                    ON CONFLICT (prompt_id) DO UPDATE SET answers = excluded.answers, updated_at = excluded.updated_at,
                    item_times = excluded.item_times
                    """,
                arguments: [
                    promptID.uuidString, try sealer.seal(answers), row?["started_at"] ?? now, now,
                    String(decoding: try JSONEncoder().encode(times), as: UTF8.self),
                ])
        }
    }

    /// The most the server accepts for one item: a day.
    static let longestItemTime = 86_400_000

    private static func itemTimes(_ text: String?) -> [String: Int] {
        text.flatMap { try? JSONDecoder().decode([String: Int].self, from: Data($0.utf8)) } ?? [:]
    }

    /// Forgets a draft, as when the person starts over.
    public func discardDraft(for promptID: UUID) throws {
        try database.write { db in
            try db.execute(sql: "DELETE FROM draft WHERE prompt_id = ?", arguments: [promptID.uuidString])
        }
    }

    // MARK: Appointments, interventions, records

    public func appointments() throws -> [Appointment] {
        try database.read { db in
            try Data.fetchAll(db, sql: "SELECT body FROM appointment ORDER BY starts_at, id").map {
                try sealer.open($0, as: Appointment.self)
            }
        }
    }

    public func appointment(_ id: UUID) throws -> Appointment? {
        try database.read { db in
            try Data.fetchOne(db, sql: "SELECT body FROM appointment WHERE id = ?", arguments: [id.uuidString])
                .map { try sealer.open($0, as: Appointment.self) }
        }
    }

    /// Interventions, newest first.
    public func interventions() throws -> [Intervention] {
        try database.read { db in
            try Data.fetchAll(db, sql: "SELECT body FROM intervention ORDER BY sent_at DESC, id").map {
                try sealer.open($0, as: Intervention.self)
            }
        }
    }

    /// What the person answered to an intervention; it stays on this device.
    public func interventionAnswer(_ id: UUID) throws -> String? {
        try database.read { db in
            try Data.fetchOne(
                db, sql: "SELECT answer FROM intervention_answer WHERE intervention_id = ?", arguments: [id.uuidString]
            )
            .map { try sealer.open($0, as: String.self) }
        }
    }

    public func saveInterventionAnswer(_ text: String, for id: UUID) throws {
        try database.write { db in
            try db.execute(
                sql: "INSERT OR REPLACE INTO intervention_answer (intervention_id, answer) VALUES (?, ?)",
                arguments: [id.uuidString, try sealer.seal(text)])
        }
    }

    /// Health records, of one kind or all.
    public func records(_ kind: RecordKind? = nil) throws -> [HealthRecord] {
        try database.read { db in
            let bodies =
                if let kind {
                    try Data.fetchAll(
                        db, sql: "SELECT body FROM record WHERE kind = ? ORDER BY id", arguments: [kind.rawValue])
                } else {
                    try Data.fetchAll(db, sql: "SELECT body FROM record ORDER BY kind, id")
                }
            return try bodies.map { try sealer.open($0, as: HealthRecord.self) }
        }
    }

    // MARK: Outbox and conflicts

    /// A change waiting to be sent, with the label the app gave it for the person.
    public struct PendingChange: Codable, Hashable, Sendable, Identifiable {
        public var id: UUID
        public var change: Change
        public var label: String?
        public var queuedAt: Date
    }

    /// Keeps a change until it is sent, and shows its effect on the device at once (an answered prompt is done, a new
    /// appointment is in the calendar). The id is the change's for good: sending it again applies it once.
    @discardableResult
    public func enqueue(_ change: Change, label: String? = nil, at now: Date) throws -> UUID {
        let id = UUID()
        try database.write { db in
            try db.execute(
                sql: "INSERT INTO outbox (id, change, label, queued_at) VALUES (?, ?, ?, ?)",
                arguments: [id.uuidString, try sealer.seal(change), label, now])
            try applyLocally(change, db)
        }
        return id
    }

    /// The changes waiting, oldest first.
    public func pending() throws -> [PendingChange] {
        try database.read { db in try pending(db) }
    }

    func pending(_ db: GRDB.Database) throws -> [PendingChange] {
        try Row.fetchAll(db, sql: "SELECT id, change, label, queued_at FROM outbox ORDER BY seq").map { row in
            PendingChange(
                id: UUID(uuidString: row["id"])!, change: try sealer.open(row["change"], as: Change.self),
                label: row["label"],
                queuedAt: row["queued_at"])
        }
    }

    /// Changes the server did not apply because they were based on something that changed meanwhile.
    public func conflicts() throws -> [SyncConflict] {
        try database.read { db in
            try Data.fetchAll(db, sql: "SELECT body FROM conflict ORDER BY seq").map {
                try sealer.open($0, as: SyncConflict.self)
            }
        }
    }

    /// Changes the server refused, with its reasons, for the app to tell the person.
    public func refusals() throws -> [(change: PendingChange, problem: Problem)] {
        try database.read { db in
            try Data.fetchAll(db, sql: "SELECT body FROM refusal ORDER BY seq").map {
                let refusal = try sealer.open($0, as: Refusal.self)
                return (refusal.change, refusal.problem)
            }
        }
    }

    /// Forgets a refusal once the person has seen it.
    public func dismissRefusal(_ id: UUID) throws {
        try database.write { db in try db.execute(sql: "DELETE FROM refusal WHERE id = ?", arguments: [id.uuidString]) }
    }

    // MARK: Notification paradata

    /// Notes what a local notification did for a prompt and queues it for the server; only the first time of each
    /// event per prompt counts, so a notification shown again changes nothing.
    public func recordNotification(_ event: DeviceNotificationEvent, prompt promptID: UUID, at now: Date) throws {
        try database.write { db in
            try db.execute(
                sql: "INSERT OR IGNORE INTO notification_event (prompt_id, event, at) VALUES (?, ?, ?)",
                arguments: [promptID.uuidString, event.rawValue, now])
            guard db.changesCount > 0 else { return }
            try db.execute(
                sql: "INSERT INTO outbox (id, change, label, queued_at) VALUES (?, ?, NULL, ?)",
                arguments: [
                    UUID().uuidString, try sealer.seal(Change.notification(promptID: promptID, event, at: now)), now,
                ])
        }
    }

    /// When each event first happened for a prompt.
    public func notificationEvents(for promptID: UUID) throws -> [DeviceNotificationEvent: Date] {
        try database.read { db in
            var events: [DeviceNotificationEvent: Date] = [:]
            for row in try Row.fetchAll(
                db, sql: "SELECT event, at FROM notification_event WHERE prompt_id = ?",
                arguments: [promptID.uuidString])
            {
                if let event = DeviceNotificationEvent(rawValue: row["event"]) { events[event] = row["at"] }
            }
            return events
        }
    }

    /// Removes everything, for signing out.
    public func clear() throws {
        try database.write { db in
            for table in StoreSchema.tables { try db.execute(sql: "DELETE FROM \(table)") }
        }
    }
}

/// A change the server refused, kept for the person to see.
struct Refusal: Codable {
    var change: OfflineStore.PendingChange
    var problem: Problem
}
