import Foundation
import GRDB

/// The store's tables, created and changed by numbered migrations so an app update never loses what is on the device.
enum StoreSchema {
    static let tables = [
        "prompt", "definition", "draft", "outbox", "appointment", "intervention", "intervention_answer", "record",
        "conflict",
        "refusal", "sync_state", "notification_event",
    ]

    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(
                sql: """
                    CREATE TABLE prompt (id TEXT PRIMARY KEY, closes_at DATETIME NOT NULL, body BLOB NOT NULL);
                    CREATE TABLE definition (key TEXT NOT NULL, version INTEGER NOT NULL, body BLOB NOT NULL, PRIMARY KEY (key, version));
                    CREATE TABLE draft (
                        prompt_id TEXT PRIMARY KEY, answers BLOB NOT NULL, started_at DATETIME NOT NULL, updated_at DATETIME NOT NULL);
                    CREATE TABLE outbox (
                        seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, change BLOB NOT NULL, label TEXT,
                        queued_at DATETIME NOT NULL);
                    CREATE TABLE appointment (id TEXT PRIMARY KEY, starts_at DATETIME NOT NULL, body BLOB NOT NULL);
                    CREATE TABLE intervention (id TEXT PRIMARY KEY, sent_at DATETIME NOT NULL, body BLOB NOT NULL);
                    CREATE TABLE intervention_answer (intervention_id TEXT PRIMARY KEY, answer BLOB NOT NULL);
                    CREATE TABLE record (kind TEXT NOT NULL, id TEXT NOT NULL, body BLOB NOT NULL, PRIMARY KEY (kind, id));
                    CREATE TABLE conflict (seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, body BLOB NOT NULL);
                    CREATE TABLE refusal (seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, body BLOB NOT NULL);
                    CREATE TABLE sync_state (key TEXT PRIMARY KEY, value TEXT NOT NULL);
                    CREATE TABLE notification_event (
                        prompt_id TEXT NOT NULL, event TEXT NOT NULL, at DATETIME NOT NULL, PRIMARY KEY (prompt_id, event));
                    """)
        }
        // The milliseconds spent per item, summed over the answers given to it (JSON, by item id).
        migrator.registerMigration("v2") { db in
            try db.execute(sql: "ALTER TABLE draft ADD COLUMN item_times TEXT")
        }
        return migrator
    }
}

/// Where the store lives by default.
enum StoreLocation {
    /// Application Support on Apple platforms; `$XDG_DATA_HOME` (or `~/.local/share`) elsewhere. Never a cache folder.
    static func defaultDirectory() throws -> URL {
        #if canImport(Darwin)
            return try FileManager.default.url(
                for: .applicationSupportDirectory, in: .userDomainMask, appropriateFor: nil, create: true
            )
            .appendingPathComponent("Interlude", isDirectory: true)
        #else
            let base =
                ProcessInfo.processInfo.environment["XDG_DATA_HOME"].map { URL(fileURLWithPath: $0) }
                ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".local/share")
            return base.appendingPathComponent("interlude", isDirectory: true)
        #endif
    }

    static func defaultKeyStore(in directory: URL) -> any KeyStore {
        #if canImport(Security)
            return KeychainKeyStore()
        #else
            return FileKeyStore(url: directory.appendingPathComponent("store.key"))
        #endif
    }
}
