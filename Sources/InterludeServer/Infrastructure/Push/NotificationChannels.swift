import AsyncHTTPClient
import Foundation
import Vapor

/// The ways a notification leaves the server: Web Push for the patient app, APNs for native apps (when
/// configured) and email for everyone else. Made once per application.
package struct NotificationChannels: Sendable {
    package let webPush: WebPushSender
    let apns: APNsSender?

    package init(webPush: WebPushSender, apns: APNsSender?) {
        self.webPush = webPush
        self.apns = apns
    }

    var vapidPublicKey: String { webPush.key.publicKey }

    static func make(settings: Settings) async throws -> NotificationChannels {
        // Push services want a way to reach the operator: the public address when it is https, else the admin.
        let subject =
            settings.push.subject
            ?? (settings.publicURL.hasPrefix("https://") ? settings.publicURL : "mailto:\(settings.adminEmail)")
        let key = try VAPIDKey.load(
            base64URL: settings.push.vapidPrivateKey, subject: subject, dataDirectory: settings.dataDirectory)
        let allowLoopback = settings.push.allowLoopback
        let apns = try await settings.push.apns.asyncMap {
            try await APNsSender(settings: $0, allowLoopback: allowLoopback)
        }
        return NotificationChannels(
            webPush: WebPushSender(clients: PushClients(allowLoopback: allowLoopback), key: key), apns: apns)
    }
}

extension Application {
    private struct NotificationChannelsKey: StorageKey {
        typealias Value = NotificationChannels
    }

    package var notificationChannels: NotificationChannels {
        get {
            guard let channels = storage[NotificationChannelsKey.self] else {
                fatalError("configure(_:settings:) has not run on this application")
            }
            return channels
        }
        set { storage[NotificationChannelsKey.self] = newValue }
    }

    /// Closes the push connections when the application stops.
    struct NotificationChannelsShutdown: LifecycleHandler {
        func shutdownAsync(_ application: Application) async {
            await application.notificationChannels.webPush.clients.shutdown()
            await application.notificationChannels.apns?.shutdown()
        }
    }
}

extension Request {
    var notificationChannels: NotificationChannels { application.notificationChannels }
}
