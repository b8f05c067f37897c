import Foundation

/// What a notification is about; patients choose per category whether they want it.
public enum NotificationCategory: String, Codable, Sendable, CaseIterable {
    /// A questionnaire that opens, and its reminders.
    case questionnaires
    case interventions
    /// An appointment one hour before it starts.
    case appointments
    case messages
    /// Alerts for therapists.
    case alerts
}

/// What happened to one notification.
public enum NotificationStatus: String, Codable, Sendable, CaseIterable {
    case queued
    case sent
    case failed
    /// Not sent because of the person's preferences or quiet hours.
    case withheld
    /// Its moment passed before it could be sent.
    case expired
    /// The person opened it.
    case clicked
}

/// How a person reached by email only hears of the study's messages.
public enum MessageEmails: String, Codable, Sendable, CaseIterable {
    /// One email for each message as it arrives.
    case each
    /// One email a day, at `MessageDigest.time`, with what is still waiting: the default, since a study may send
    /// several messages a day.
    case daily
}

/// The daily email that gathers the messages waiting for a person reached by email only.
public enum MessageDigest {
    /// The local time the day's email goes out.
    public static let time = LocalTime(hour: 18, minute: 0)!

    /// The first digest moment at or after `instant`, in the person's zone.
    public static func moment(onOrAfter instant: Date, in zone: TimeZone) -> Date {
        let day = LocalDate(instant, in: zone)
        let today = LocalDateTime(date: day, time: time).instant(in: zone)
        return today >= instant ? today : LocalDateTime(date: day.adding(days: 1), time: time).instant(in: zone)
    }
}

/// A patient's choices: which categories they want and a nightly time without notifications.
public struct NotificationPreferences: Codable, Sendable, Equatable {
    public var questionnaires: Bool
    public var interventions: Bool
    public var appointments: Bool
    public var messages: Bool
    public var quietHours: QuietHours?
    public var messageEmails: MessageEmails

    public struct QuietHours: Codable, Sendable, Equatable {
        /// Quiet from `start` until `end` in the person's local time; crosses midnight when `end` is earlier.
        public var start: LocalTime
        public var end: LocalTime

        public init(start: LocalTime, end: LocalTime) {
            self.start = start
            self.end = end
        }

        public func contains(_ time: LocalTime) -> Bool {
            start <= end ? (time >= start && time < end) : (time >= start || time < end)
        }
    }

    public static let standard = NotificationPreferences(
        questionnaires: true, interventions: true, appointments: true, messages: true, quietHours: nil)

    public init(
        questionnaires: Bool, interventions: Bool, appointments: Bool, messages: Bool, quietHours: QuietHours?,
        messageEmails: MessageEmails = .daily
    ) {
        self.questionnaires = questionnaires
        self.interventions = interventions
        self.appointments = appointments
        self.messages = messages
        self.quietHours = quietHours
        self.messageEmails = messageEmails
    }

    private enum CodingKeys: String, CodingKey {
        case questionnaires, interventions, appointments, messages, quietHours, messageEmails
    }

    /// Choices kept before the daily email existed read as wanting it.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            questionnaires: try container.decode(Bool.self, forKey: .questionnaires),
            interventions: try container.decode(Bool.self, forKey: .interventions),
            appointments: try container.decode(Bool.self, forKey: .appointments),
            messages: try container.decode(Bool.self, forKey: .messages),
            quietHours: try container.decodeIfPresent(QuietHours.self, forKey: .quietHours),
            messageEmails: try container.decodeIfPresent(MessageEmails.self, forKey: .messageEmails) ?? .daily)
    }

    public func wants(_ category: NotificationCategory) -> Bool {
        switch category {
        case .questionnaires: questionnaires
        case .interventions: interventions
        case .appointments: appointments
        case .messages: messages
        case .alerts: true
        }
    }

    public func validate() throws(ValidationFailure) {
        if let quietHours, quietHours.start == quietHours.end {
            throw ValidationFailure(field: "quietHours.end", code: .invalidValue)
        }
    }

    /// What to do with a notification of `category` due at `due` that is worth sending until `expires`.
    public func decision(
        for category: NotificationCategory, due: Date, expires: Date, in zone: TimeZone
    ) -> NotificationDecision {
        guard wants(category) else { return .withhold(.preference) }
        guard let quietHours, quietHours.contains(LocalDateTime(due, in: zone).time) else { return .send }
        // Wait for the end of the quiet hours, if the notification still matters then.
        var day = LocalDate(due, in: zone)
        if quietHours.start > quietHours.end, LocalDateTime(due, in: zone).time >= quietHours.start {
            day = day.adding(days: 1)
        }
        let end = LocalDateTime(date: day, time: quietHours.end).instant(in: zone)
        return end < expires ? .postpone(until: end) : .withhold(.quietHours)
    }
}

public enum NotificationDecision: Equatable, Sendable {
    case send
    case postpone(until: Date)
    case withhold(WithholdReason)

    public enum WithholdReason: String, Sendable {
        case preference
        case quietHours
        /// The person was sent `NotificationCeiling.perHour` notifications in the last hour already.
        case hourlyCeiling
    }
}

/// At most so many notifications reach one person in any hour, whatever plans and reminders ask for: a plan
/// written wrongly, or a rule firing in a loop, must not ring someone's phone every minute. Alerts for therapists
/// are not held back: a risk must reach them.
public enum NotificationCeiling {
    public static let perHour = 12
    public static let hour: TimeInterval = 3600

    /// Whether a notification of `category` worth sending until `expires` goes now, given when the person was sent
    /// others (`sent`, any order): when the last hour holds `perHour` of them, it waits until the oldest is an hour
    /// old, or is withheld when it would matter no more by then.
    public static func decision(
        for category: NotificationCategory, sent: [Date], now: Date, expires: Date
    ) -> NotificationDecision {
        guard category != .alerts else { return .send }
        let recent = sent.filter { $0 > now.addingTimeInterval(-hour) && $0 <= now }.sorted()
        guard recent.count >= perHour else { return .send }
        let free = recent[recent.count - perHour].addingTimeInterval(hour)
        return free < expires ? .postpone(until: free) : .withhold(.hourlyCeiling)
    }
}

/// When to try again after a temporary failure: 30 seconds, then doubling up to two hours, at most eight tries.
public enum NotificationRetry {
    public static let mostAttempts = 8

    public static func delay(afterAttempt attempt: Int) -> TimeInterval {
        min(30 * pow(2, Double(max(attempt, 1) - 1)), 2 * 3600)
    }

    /// The next try after `attempt` failed at `now`, or nil when there is none left before `expires`.
    public static func next(afterAttempt attempt: Int, at now: Date, expires: Date) -> Date? {
        guard attempt < mostAttempts else { return nil }
        let next = now.addingTimeInterval(delay(afterAttempt: attempt))
        return next < expires ? next : nil
    }
}
