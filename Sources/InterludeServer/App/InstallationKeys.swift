import Fluent
import Foundation

/// The keys every process of one installation must share, checked against the database before a process serves or
/// runs jobs. A machine that started with a data key of its own would seal what the others cannot open; one with a
/// web push key of its own would hand browsers a key that the worker's messages do not match. The first process
/// records what the keys are (a keyed check value for the data key, never the key); every later one must agree.
struct InstallationKeys {
    let database: any Database
    let services: AppServices
    let vapidPublicKey: String

    static let dataKeySetting = "installation.dataKeyCheck"
    static let vapidSetting = "installation.webPushPublicKey"

    func verify() async throws {
        let directory = services.settings.dataDirectory
        try await expect(
            Self.dataKeySetting, services.cipher.matchKey(Self.dataKeySetting),
            refusal: """
                This process's data key is not the one the installation's data is sealed with. Every machine needs the \
                same key: copy data.key from the first machine's data directory to \(directory)/data.key, or set \
                INTERLUDE_DATA_KEY to the same value on every machine.
                """)
        try await expect(
            Self.vapidSetting, vapidPublicKey,
            refusal: """
                This process's web push key is not the installation's: browsers subscribed through another machine would \
                not accept its notifications. Copy vapid.key from the first machine's data directory to \
                \(directory)/vapid.key, or set WEBPUSH_VAPID_PRIVATE_KEY to the same value on every machine.
                """)
    }

    private func expect(_ key: String, _ value: String, refusal: String) async throws {
        if let stored = try await SettingRecord.find(key, on: database) {
            guard stored.value == value else { throw CommandFailure(message: refusal) }
            return
        }
        do {
            try await SettingRecord(key: key, value: value, now: services.clock.now).create(on: database)
        } catch {
            // Another process recorded it first: this one must agree with it.
            guard let stored = try await SettingRecord.find(key, on: database) else { throw error }
            guard stored.value == value else { throw CommandFailure(message: refusal) }
        }
    }
}
