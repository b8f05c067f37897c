import Crypto
import Fluent
import Foundation
import InterludeCore
import InterludeSQLite

/// Sends what is due from the outbox. A dispatcher first claims a notification for a short lease with one
/// conditional UPDATE, so of several processes exactly one sends it; a process that dies while holding it
/// leaves it to the next after the lease. Push messages carry the dedupe key as their topic or collapse id, so
/// a repeat after such a crash replaces the first at the push service instead of showing twice.
package struct NotificationDispatcher: Sendable {
    let database: any Database
    let services: AppServices
    let channels: NotificationChannels

    package init(database: any Database, services: AppServices, channels: NotificationChannels) {
        self.database = database
        self.services = services
        self.channels = channels
    }

    static let lease: TimeInterval = 120

    package struct Report: Sendable, Equatable {
        package var sent = 0
        var failed = 0
        var withheld = 0
        var expired = 0
        var postponed = 0
        var retrying = 0
    }

    /// How many notifications are on their way at once.
    static let concurrency = 16

    /// What became of one notification.
    enum Disposition: Sendable {
        case sent, failed, withheld, expired, postponed, retrying, skipped
    }

    /// Sends up to `limit` due notifications, several at a time; returns what became of them.
    package func dispatch(now: Date, limit: Int = 200) async throws -> Report {
        let due = try await NotificationRecord.query(on: database)
            .filter(\.$status == NotificationStatus.queued)
            .filter(\.$nextAttemptAt <= now)
            .sort(\.$nextAttemptAt)
            .limit(limit)
            .all()
        var report = Report()
        try await withThrowingTaskGroup(of: Disposition.self) { group in
            var unclaimed = due[...]
            var claimed: [NotificationRecord] = []
            var round = Round()
            // When each person was last sent something, counted here as sends start: the hourly ceiling holds for
            // notifications of one run too.
            var sentTimes: [UUID: [Date]] = [:]
            // Claimed a round ahead, `concurrency` at a time: one statement per round, and every claimed one starts
            // well inside its lease. What the round's notifications need is read together after the claim.
            func startNext() async throws {
                if claimed.isEmpty {
                    while claimed.isEmpty, !unclaimed.isEmpty {
                        let next = Array(unclaimed.prefix(Self.concurrency))
                        unclaimed = unclaimed.dropFirst(next.count)
                        let taken = try await claim(next, now: now)
                        claimed = next.filter { $0.id.map(taken.contains) == true }
                    }
                    round = try await read(claimed, knowing: Set(sentTimes.keys), now: now)
                    sentTimes.merge(round.sent) { known, _ in known }
                }
                guard !claimed.isEmpty else { return }
                let notification = claimed.removeFirst()
                let round = round
                let ceiling = NotificationCeiling.decision(
                    for: notification.category, sent: sentTimes[notification.$user.id] ?? [], now: now,
                    expires: notification.expiresAt)
                if ceiling == .send { sentTimes[notification.$user.id, default: []].append(now) }
                // Spread over the loops: left alone, every send would run on the loop this run started on.
                group.addTask(executorPreference: EventLoopExecutor.next()) {
                    try await process(notification, in: round, ceiling: ceiling, now: now)
                }
            }
            for _ in 0..<Self.concurrency { try await startNext() }
            while let disposition = try await group.next() {
                switch disposition {
                case .sent: report.sent += 1
                case .failed: report.failed += 1
                case .withheld: report.withheld += 1
                case .expired: report.expired += 1
                case .postponed: report.postponed += 1
                case .retrying: report.retrying += 1
                case .skipped: break
                }
                try await startNext()
            }
        }
        return report
    }

    /// Takes for the lease those of `notifications` no other dispatcher holds, with one conditional UPDATE; answers
    /// the ids it took.
    func claim(_ notifications: [NotificationRecord], now: Date) async throws -> Set<UUID> {
        try await Statements.claimNotifications(
            try notifications.map { try $0.requireID() }, until: now.addingTimeInterval(Self.lease), now: now,
            on: database)
    }

    /// What the notifications of one round need: their people, with their preferences and active devices, and
    /// the prompts they are about.
    struct Round: Sendable {
        var users: [UUID: UserRecord] = [:]
        var preferences: [UUID: NotificationPreferences] = [:]
        var devices: [UUID: [DeviceRecord]] = [:]
        var prompts: [UUID: PromptRecord] = [:]
        /// When the people not met in an earlier round were sent notifications in the last hour.
        var sent: [UUID: [Date]] = [:]
    }

    private func read(_ notifications: [NotificationRecord], knowing known: Set<UUID>, now: Date) async throws -> Round
    {
        guard !notifications.isEmpty else { return Round() }
        let userIDs = Array(Set(notifications.map(\.$user.id)))
        let unknown = userIDs.filter { !known.contains($0) }
        let recent =
            unknown.isEmpty
            ? []
            : try await NotificationRecord.query(on: database)
                .filter(\.$user.$id ~~ unknown).filter(\.$sentAt > now.addingTimeInterval(-NotificationCeiling.hour))
                .field(\.$user.$id).field(\.$sentAt).all()
        var sent = Dictionary(uniqueKeysWithValues: unknown.map { ($0, [Date]()) })
        for record in recent { if let at = record.sentAt { sent[record.$user.id, default: []].append(at) } }
        let users = try await UserRecord.query(on: database).filter(\.$id ~~ userIDs).all()
        let devices = try await DeviceRecord.query(on: database)
            .filter(\.$user.$id ~~ userIDs).filter(\.$disabledAt == nil).all()
        let promptIDs = notifications.compactMap(\.promptID)
        let prompts =
            promptIDs.isEmpty ? [] : try await PromptRecord.query(on: database).filter(\.$id ~~ promptIDs).all()
        return Round(
            users: Dictionary(uniqueKeysWithValues: try users.map { (try $0.requireID(), $0) }),
            preferences: try await DeviceService(database: database, services: services).preferences(of: userIDs),
            devices: Dictionary(grouping: devices, by: \.$user.id),
            prompts: Dictionary(uniqueKeysWithValues: try prompts.map { (try $0.requireID(), $0) }),
            sent: sent)
    }

    private func process(
        _ notification: NotificationRecord, in round: Round, ceiling: NotificationDecision, now: Date
    ) async throws -> Disposition {
        guard notification.expiresAt > now else {
            // A notification that was tried and kept failing ends for what the channels answered.
            let tried = Self.attempts(of: notification)
            try await finish(
                notification, .expired, receipt: "its moment passed before it could be sent",
                miss: tried.isEmpty ? .expiredBeforeSending : NotificationMiss(failedAttempts: tried))
            return .expired
        }
        guard try await stillMatters(notification, in: round, now: now) else {
            try await finish(
                notification, .expired, receipt: "answered, moved or removed before it was sent",
                miss: .noLongerNeeded)
            return .expired
        }
        guard let user = round.users[notification.$user.id] else { return .skipped }
        let preferences = round.preferences[notification.$user.id] ?? .standard
        let wish = preferences.decision(
            for: notification.category, due: max(notification.dueAt, now), expires: notification.expiresAt,
            in: user.zone)
        for decision in [wish, ceiling] {
            if let held = try await hold(notification, as: decision) { return held }
        }
        let devices = round.devices[notification.$user.id] ?? []
        if Self.waitsForDailyEmail(notification, preferences: preferences, devices: devices) {
            try await queueDailyEmail(for: user, covering: notification, now: now)
            try await finish(notification, .withheld, receipt: "kept for the daily email", miss: .dailyEmail)
            return .withheld
        }
        if notification.dedupeKey.hasPrefix(Self.dailyEmailPrefix) {
            guard try await writeDailyEmail(notification, for: user, now: now) else {
                try await finish(
                    notification, .expired, receipt: "every message was read before the daily email",
                    miss: .noLongerNeeded)
                return .expired
            }
        }
        let outcomes = try await deliver(notification, to: user, devices: devices, now: now)
        Self.record(outcomes, of: notification, at: now)
        let receipt = outcomes.map(\.receipt).joined(separator: "; ")
        if outcomes.contains(where: \.isDelivered) {
            notification.channel = Set(outcomes.filter(\.isDelivered).map(\.channel.rawValue)).sorted()
                .joined(separator: "+")
            notification.sentAt = now
            try await finish(notification, .sent, receipt: receipt)
            return .sent
        }
        notification.attempts += 1
        if outcomes.contains(where: \.isRetry),
            let next = NotificationRetry.next(
                afterAttempt: notification.attempts, at: now, expires: notification.expiresAt)
        {
            notification.nextAttemptAt = next
            notification.receipt = receipt
            notification.claimedUntil = nil
            try await notification.save(on: database)
            return .retrying
        }
        try await finish(
            notification, .failed, receipt: receipt.isEmpty ? "no way to reach the person" : receipt,
            miss: NotificationMiss(failedAttempts: Self.attempts(of: notification)))
        return .failed
    }

    /// A questionnaire must still wait for an answer and have opened at the moment it was queued for; an
    /// appointment's reminder must still be before it starts when it did (news of a change is told whatever
    /// follows); an intervention must still be there; an alert must still wait for its acknowledgement.
    private func stillMatters(_ notification: NotificationRecord, in round: Round, now: Date) async throws -> Bool {
        if let promptID = notification.promptID {
            guard let prompt = round.prompts[promptID] else { return false }
            let pending = [PromptStatus.scheduled, PromptStatus.open].contains(prompt.status)
            return pending && prompt.opensAt <= now && prompt.closesAt > now
        }
        if let appointmentID = notification.appointmentID, notification.dedupeKey.hasPrefix("appointment:") {
            guard let appointment = try await AppointmentRecord.find(appointmentID, on: database) else { return false }
            return notification.dedupeKey.hasSuffix(":\(Int(appointment.startsAt.timeIntervalSince1970))")
                && appointment.startsAt > now
        }
        let parts = notification.dedupeKey.split(separator: ":")
        if parts.count >= 2, let id = UUID(uuidString: String(parts[1])) {
            switch parts[0] {
            case "intervention": return try await InterventionRecord.find(id, on: database) != nil
            case "alert": return try await AlertRecord.find(id, on: database)?.acknowledgedAt == nil
            default: break
            }
        }
        return true
    }

    // MARK: The daily email of messages

    static let dailyEmailPrefix = "daily-messages:"

    /// A study's message for someone with no device for push who chose one email a day.
    static func waitsForDailyEmail(
        _ notification: NotificationRecord, preferences: NotificationPreferences, devices: [DeviceRecord]
    ) -> Bool {
        notification.category == .messages && devices.isEmpty && preferences.messageEmails == .daily
            && InterventionService.interventionID(inDedupeKey: notification.dedupeKey) != nil
    }

    /// Queues the day's email at the digest moment after the message arrived; the first message of a day queues it,
    /// the rest find it queued (its key names the person and the day).
    private func queueDailyEmail(for user: UserRecord, covering notification: NotificationRecord, now: Date)
        async throws
    {
        let moment = MessageDigest.moment(onOrAfter: notification.dueAt, in: user.zone)
        let day = LocalDate(moment, in: user.zone)
        let userID = try user.requireID()
        try await NotificationOutbox(database: database, localizer: services.localizer).enqueue(
            [
                .init(
                    userID: userID, category: .messages,
                    dedupeKey: "\(Self.dailyEmailPrefix)\(userID.lowercasedText):\(day)",
                    title: services.localizer.text("notification.daily.title", user.language), body: "",
                    path: "/app/interventions", dueAt: moment,
                    expiresAt: moment.addingTimeInterval(Self.dailyEmailLifetime))
            ],
            now: now)
    }

    /// The day's email is worth sending until the next one.
    static let dailyEmailLifetime: TimeInterval = 20 * 3600

    /// Says how many of the study's messages of the last day wait unread and since when, in the person's language
    /// and zone; false when none does.
    private func writeDailyEmail(_ notification: NotificationRecord, for user: UserRecord, now: Date) async throws
        -> Bool
    {
        let waiting = try await InterventionRecord.query(on: database)
            .filter(\.$patient.$id == user.requireID())
            .filter(\.$origin == .messagePlan)
            .filter(\.$seenAt == nil)
            .filter(\.$deliverAt > now.addingTimeInterval(-24 * 3600))
            .filter(\.$deliverAt <= now)
            .sort(\.$deliverAt)
            .all(\.$deliverAt)
        guard let first = waiting.first else { return false }
        let since = DateDisplay(language: user.language, timeZone: user.zone).dayDateTime(first)
        notification.body = services.localizer.text(
            "notification.daily.body", count: waiting.count, user.language, ["since": since])
        return true
    }

    struct Outcome: Sendable {
        let channel: NotificationChannel
        let result: PushOutcome

        var isDelivered: Bool { if case .delivered = result { true } else { false } }
        var isRetry: Bool { if case .retry = result { true } else { false } }
        var receipt: String {
            switch result {
            case .delivered(let text), .gone(let text), .retry(let text), .failed(let text): text
            }
        }

        func attempt(at now: Date) -> NotificationAttempt {
            let outcome: NotificationAttempt.Outcome =
                switch result {
                case .delivered: .delivered
                case .gone: .gone
                case .retry: .retry
                case .failed: .failed
                }
            return NotificationAttempt(at: now, channel: channel, outcome: outcome, detail: receipt)
        }
    }

    /// What the channels answered on every try so far, oldest first.
    static func attempts(of notification: NotificationRecord) -> [NotificationAttempt] {
        NotificationAttempt.log(notification.attemptLog)
    }

    /// Adds what the channels answered on this try to the notification's log.
    static func record(_ outcomes: [Outcome], of notification: NotificationRecord, at now: Date) {
        let log = attempts(of: notification) + outcomes.map { $0.attempt(at: now) }
        notification.attemptLog = NotificationAttempt.text(of: log)
    }

    /// Push to every active device; email when there is none (or none took it) and the address is confirmed.
    private func deliver(_ notification: NotificationRecord, to user: UserRecord, devices: [DeviceRecord], now: Date)
        async throws -> [Outcome]
    {
        let notificationID = try notification.requireID()
        var outcomes: [Outcome] = []
        let topic = Self.topic(of: notification.dedupeKey)
        for device in devices {
            let result: PushOutcome
            switch device.platform {
            case .webpush:
                let payload = try await pushPayload(notification, id: notificationID, now: now)
                result = await channels.webPush.send(
                    .init(
                        endpoint: device.address, p256dh: device.p256dh ?? "", auth: device.auth ?? "",
                        payload: payload,
                        topic: topic, timeToLive: max(60, Int(notification.expiresAt.timeIntervalSince(now)))),
                    now: now)
            case .apns:
                guard let apns = channels.apns else {
                    result = .failed("apns is not configured on this server")
                    break
                }
                result = await apns.send(
                    .init(
                        deviceToken: device.address, title: notification.title, body: notification.body,
                        path: notification.path, notificationID: notificationID, collapseID: topic,
                        expiresAt: notification.expiresAt),
                    now: now)
            }
            if case .gone(let reason) = result {
                device.disabledAt = now
                device.disabledReason = reason
                try await device.save(on: database)
            }
            outcomes.append(Outcome(channel: device.platform == .apns ? .apns : .webpush, result: result))
        }
        if !outcomes.contains(where: { $0.isDelivered || $0.isRetry }), user.emailVerifiedAt != nil {
            outcomes.append(try await email(notification, to: user))
        }
        return outcomes
    }

    private func email(_ notification: NotificationRecord, to user: UserRecord) async throws -> Outcome {
        let composer = EmailComposer(localizer: services.localizer, publicURL: services.settings.publicURL)
        let message = composer.notification(
            to: user.email, title: notification.title, body: notification.body,
            link: services.settings.publicURL + notification.path, language: user.language)
        do {
            try await services.mailer.send(message)
            return Outcome(channel: .email, result: .delivered("email accepted"))
        } catch {
            return Outcome(channel: .email, result: .retry("email \(String(describing: error))"))
        }
    }

    /// What the patient app's service worker receives: the texts, the page to open and where to report a tap.
    private func pushPayload(_ notification: NotificationRecord, id: UUID, now: Date) async throws -> Data {
        struct Payload: Encodable {
            let id: String
            let title: String
            let body: String
            let path: String
            let click: String
        }
        let key = try await Self.clickKey(for: id, services: services, on: database, now: now)
        return try JSONEncoder().encode(
            Payload(
                id: id.lowercasedText, title: notification.title, body: notification.body,
                path: notification.path,
                click: "/api/v1/notifications/\(id.lowercasedText)/click?key=\(key)"))
    }

    /// The key that lets a tap on a notification be recorded without a session (service workers have none).
    static func clickKey(for id: UUID, services: AppServices, on database: any Database, now: Date) async throws
        -> String
    {
        try await services.serverSecret.digest("notification-click:\(id.lowercasedText)", on: database, now: now)
    }

    /// A Web Push topic (at most 32 URL-safe characters) and APNs collapse id for a dedupe key.
    static func topic(of dedupeKey: String) -> String {
        String(Data(SHA256.hash(data: Data(dedupeKey.utf8))).base64URLEncoded.prefix(32))
    }

    /// Withholds or postpones the notification as `decision` says; nil when it is to be sent.
    private func hold(_ notification: NotificationRecord, as decision: NotificationDecision) async throws
        -> Disposition?
    {
        switch decision {
        case .withhold(let reason):
            try await finish(notification, .withheld, receipt: reason.rawValue, miss: NotificationMiss(reason))
            return .withheld
        case .postpone(let until):
            notification.nextAttemptAt = until
            notification.claimedUntil = nil
            try await notification.save(on: database)
            return .postponed
        case .send:
            return nil
        }
    }

    private func finish(
        _ notification: NotificationRecord, _ status: NotificationStatus, receipt: String, miss: NotificationMiss? = nil
    ) async throws {
        notification.status = status
        notification.receipt = receipt
        notification.miss = miss
        notification.claimedUntil = nil
        try await notification.save(on: database)
    }
}
