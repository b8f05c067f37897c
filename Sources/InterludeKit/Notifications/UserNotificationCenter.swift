#if canImport(UserNotifications)
    import Foundation
    import UserNotifications

    /// The scheduler's view of `UNUserNotificationCenter`. Each notification fires after an interval to its instant, so a
    /// change of zone or daylight-saving time cannot move it; `texts` gives the title and body in the person's language.
    public struct UserNotificationCenterAdapter: LocalNotificationCenter {
        public typealias Texts = @Sendable (NotificationPlanner.Planned) -> (title: String, body: String)

        private let texts: Texts

        public init(texts: @escaping Texts) {
            self.texts = texts
        }

        private var center: UNUserNotificationCenter { .current() }

        public func pendingIdentifiers() async -> Set<String> {
            Set(await center.pendingNotificationRequests().map(\.identifier))
        }

        public func add(_ notification: NotificationPlanner.Planned) async throws {
            let content = UNMutableNotificationContent()
            let (title, body) = texts(notification)
            content.title = title
            content.body = body
            content.sound = .default
            content.userInfo = ["promptId": notification.promptID.uuidString, "kind": notification.kind.rawValue]
            let trigger = UNTimeIntervalNotificationTrigger(
                timeInterval: max(1, notification.fireAt.timeIntervalSince(SystemTime.now())), repeats: false)
            try await center.add(UNNotificationRequest(identifier: notification.id, content: content, trigger: trigger))
        }

        public func remove(_ identifiers: [String]) async {
            center.removePendingNotificationRequests(withIdentifiers: identifiers)
        }
    }
#endif
