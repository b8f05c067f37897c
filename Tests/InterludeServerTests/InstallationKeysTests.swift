import Crypto
import Foundation
import Testing

@testable import InterludeServer

@Suite("Installation keys")
struct InstallationKeysTests {
    private func services(_ base: AppServices, cipher: FieldCipher) -> AppServices {
        AppServices(
            settings: base.settings, clock: base.clock, mailer: base.mailer, passwords: base.passwords,
            localizer: base.localizer,
            serverSecret: base.serverSecret, metrics: base.metrics, cipher: cipher, library: base.library)
    }

    @Test("a machine with the installation's keys starts; one with a data key or a web push key of its own is refused")
    func machinesMustAgree() async throws {
        try await withTestApp { context in
            let first = context.app.interlude
            let vapid = context.app.notificationChannels.vapidPublicKey
            try await InstallationKeys(database: context.database, services: first, vapidPublicKey: vapid).verify()
            let recorded = try #require(
                try await SettingRecord.find(InstallationKeys.dataKeySetting, on: context.database))
            #expect(!recorded.value.isEmpty)
            #expect(!recorded.value.contains(context.settings.dataKey ?? "-"))

            // The same keys again (another process of the same installation, or a restart): accepted.
            let same = services(
                first, cipher: try FieldCipher.load(base64Key: context.settings.dataKey, dataDirectory: "/nonexistent"))
            try await InstallationKeys(database: context.database, services: same, vapidPublicKey: vapid).verify()

            let otherKey = Data((0..<32).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
            let stranger = services(
                first, cipher: try FieldCipher.load(base64Key: otherKey, dataDirectory: "/nonexistent"))
            let refusedKey = await #expect(throws: CommandFailure.self) {
                try await InstallationKeys(database: context.database, services: stranger, vapidPublicKey: vapid)
                    .verify()
            }
            #expect(refusedKey?.message.contains("INTERLUDE_DATA_KEY") == true)

            let otherPush = P256.Signing.PrivateKey().publicKey.x963Representation.base64URLEncoded
            let refusedPush = await #expect(throws: CommandFailure.self) {
                try await InstallationKeys(database: context.database, services: same, vapidPublicKey: otherPush)
                    .verify()
            }
            #expect(refusedPush?.message.contains("WEBPUSH_VAPID_PRIVATE_KEY") == true)
            #expect(try await SettingRecord.find(InstallationKeys.vapidSetting, on: context.database)?.value == vapid)
        }
    }
}
