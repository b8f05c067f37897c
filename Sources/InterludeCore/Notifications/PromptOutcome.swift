import Foundation

/// Why a notification ended without reaching the person.
public enum NotificationMiss: String, Codable, Sendable, CaseIterable {
    /// No device to push to and no confirmed email address.
    case noDevice = "no_device"
    /// The push service said the person's subscription no longer exists, and there was no other way.
    case subscriptionGone = "subscription_gone"
    /// The person switched this kind of notification off.
    case categoryOff = "category_off"
    /// It fell into the person's quiet hours, and mattered no more when they ended.
    case quietHours = "quiet_hours"
    /// The person had been sent `NotificationCeiling.perHour` notifications in the hour already.
    case hourlyCeiling = "hourly_ceiling"
    /// The push service or the mail server refused it, or failed until it mattered no more.
    case refused
    /// Its moment passed before it could be sent: the server was not running, or was behind.
    case expiredBeforeSending = "expired_before_sending"
    /// Kept for the person's daily email of messages.
    case dailyEmail = "daily_email"
    /// Answered, moved or removed before it was sent.
    case noLongerNeeded = "no_longer_needed"

    public init(_ reason: NotificationDecision.WithholdReason) {
        switch reason {
        case .preference: self = .categoryOff
        case .quietHours: self = .quietHours
        case .hourlyCeiling: self = .hourlyCeiling
        }
    }

    /// Why nothing reached the person, from what each channel answered: a subscription that is gone is named
    /// before a refusal, and with no channel at all there was no device.
    public init(failedAttempts attempts: [NotificationAttempt]) {
        if attempts.isEmpty {
            self = .noDevice
        } else if attempts.allSatisfy({ $0.outcome == .gone }) {
            self = .subscriptionGone
        } else {
            self = .refused
        }
    }
}

/// The ways a notification reaches a person.
public enum NotificationChannel: String, Codable, Sendable, CaseIterable {
    case webpush
    case apns
    case email
}

/// What one channel answered when a notification was sent through it.
public struct NotificationAttempt: Codable, Sendable, Equatable {
    public enum Outcome: String, Codable, Sendable, CaseIterable {
        case delivered
        /// The subscription or device token no longer exists.
        case gone
        /// A temporary failure: tried again later.
        case retry
        case failed
    }

    public var at: Date
    public var channel: NotificationChannel
    public var outcome: Outcome
    /// The service's answer, as it gave it (a status code, a reason).
    public var detail: String

    public init(at: Date, channel: NotificationChannel, outcome: Outcome, detail: String) {
        self.at = at
        self.channel = channel
        self.outcome = outcome
        self.detail = detail
    }
}

extension NotificationAttempt {
    /// A log of attempts as it is stored: JSON, times in ISO 8601.
    public static func text(of log: [NotificationAttempt]) -> String {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = .sortedKeys
        return String(decoding: (try? encoder.encode(log)) ?? Data("[]".utf8), as: UTF8.self)
    }

    /// The attempts of a stored log; none for no log, or one that cannot be read.
    public static func log(_ text: String?) -> [NotificationAttempt] {
        guard let text else { return [] }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return (try? decoder.decode([NotificationAttempt].self, from: Data(text.utf8))) ?? []
    }
}

/// Why a prompt was withdrawn before it was answered.
public enum PromptCancelReason: String, Codable, Sendable, CaseIterable {
    /// The therapist paused the treatment.
    case paused
    /// The treatment ended, or the participant left.
    case ended
}

/// How a prompt ended, as a study reports it: every prompt that opened ends in exactly one of these.
public enum PromptOutcome: String, Codable, Sendable, CaseIterable {
    /// Not opened yet, or still open.
    case pending
    case completed
    /// A notification reached the person, and the prompt closed unanswered.
    case expiredDelivered = "expired_delivered"
    /// Nothing reached the person before the prompt closed unanswered.
    case expiredUndelivered = "expired_undelivered"
    case cancelled

    /// Why a prompt expired undelivered or was cancelled.
    public enum Reason: Hashable, Sendable {
        /// What met its first notification.
        case missed(NotificationMiss)
        /// No notification was ever queued for it (it opened while the server was off for longer than the
        /// outbox looks back).
        case neverNotified
        case withdrawn(PromptCancelReason)
        /// Its questionnaire was deactivated while it waited.
        case questionnaireDeactivated

        /// Its name in exports and in the console's texts: the miss's or the withdrawal's own, `never_notified`,
        /// `questionnaire_deactivated`.
        public var rawValue: String {
            switch self {
            case .missed(let miss): miss.rawValue
            case .neverNotified: "never_notified"
            case .withdrawn(let reason): reason.rawValue
            case .questionnaireDeactivated: "questionnaire_deactivated"
            }
        }
    }

    /// The outcome of a prompt whose status is `status` now, given whether any notification (the server's or the
    /// device's own) reached the person, why its notifications that did not reach them ended, in the order they
    /// were due, and why it was withdrawn. Undelivered, the first notification's miss is the reason: the reminders
    /// that followed it mostly missed for the same cause.
    public static func of(
        status: PromptStatus, delivered: Bool, misses: [NotificationMiss], cancelled: PromptCancelReason?
    ) -> (outcome: PromptOutcome, reason: Reason?) {
        switch status {
        case .scheduled, .open: return (.pending, nil)
        case .completed: return (.completed, nil)
        case .cancelled: return (.cancelled, cancelled.map(Reason.withdrawn))
        case .inactive: return (.cancelled, .questionnaireDeactivated)
        case .expired:
            if delivered { return (.expiredDelivered, nil) }
            return (.expiredUndelivered, misses.first.map(Reason.missed) ?? .neverNotified)
        }
    }
}
