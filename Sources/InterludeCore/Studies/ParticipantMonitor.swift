import Foundation

/// One prompt as the study monitor reads it: when it opened and closed, where it stands now, and when it reached the
/// person, was opened and was answered.
public struct MonitoredPrompt: Sendable, Equatable {
    public var opensAt: Date
    public var closesAt: Date
    /// The status now (`PromptStatus.at`).
    public var status: PromptStatus
    /// When a notification first reached the person: the server's, or the device's own.
    public var deliveredAt: Date?
    public var openedAt: Date?
    public var submittedAt: Date?
    /// The quality flags of its response.
    public var qualityFlags: [ResponseQuality.Flag]

    public init(
        opensAt: Date, closesAt: Date, status: PromptStatus, deliveredAt: Date?, openedAt: Date?, submittedAt: Date?,
        qualityFlags: [ResponseQuality.Flag] = []
    ) {
        self.opensAt = opensAt
        self.closesAt = closesAt
        self.status = status
        self.deliveredAt = deliveredAt
        self.openedAt = openedAt
        self.submittedAt = submittedAt
        self.qualityFlags = qualityFlags
    }
}

/// How prompts reach one participant and how they answer, over a period, with the signs that something has gone
/// quiet: what a study's team looks at every day, before compliance falls.
public struct ParticipantMonitor: Sendable, Equatable {
    /// Prompts that opened in the period (withdrawn ones left out).
    public var planned: Int
    public var delivered: Int
    public var answered: Int
    /// Prompts missed one after the other, counting back from the latest that closed.
    public var missedInRow: Int
    /// Responses of the period with a response-quality flag (answered too fast, straightlined, little variation).
    public var flaggedResponses: Int
    /// The median time from a notification reaching the person to their opening the prompt, and from opening to
    /// sending the answers.
    public var deliveredToOpened: TimeInterval?
    public var openedToSubmitted: TimeInterval?
    /// When the person's device last reached the server.
    public var lastSeen: Date?
    public var flags: [Flag]

    public enum Flag: String, Sendable, CaseIterable {
        /// Prompts opened in the last day, and nothing reached the person in it.
        case noDelivery = "no_delivery_24h"
        /// The push service said the person's subscription is gone, and no other device takes notifications.
        case subscriptionGone = "subscription_gone"
        /// The last three prompts that closed were all missed.
        case missedInRow = "missed_3_in_row"
        /// The device has not reached the server for two days.
        case noContact = "no_contact_48h"
    }

    public static let quietDelivery: TimeInterval = 24 * 3600
    public static let quietContact: TimeInterval = 48 * 3600
    public static let missedRun = 3

    /// The figures and flags of a participant's `prompts` of the period, at `now`.
    public static func of(prompts: [MonitoredPrompt], subscriptionGone: Bool, lastSeen: Date?, now: Date)
        -> ParticipantMonitor
    {
        let opened = prompts.filter { $0.opensAt <= now && $0.status != .cancelled }.sorted { $0.opensAt < $1.opensAt }
        let closed = opened.filter { $0.status == .completed || $0.status == .expired }
        let missed = closed.reversed().prefix { $0.status == .expired }.count
        var monitor = ParticipantMonitor(
            planned: opened.count, delivered: opened.filter { $0.deliveredAt != nil }.count,
            answered: opened.filter { $0.status == .completed }.count, missedInRow: missed,
            flaggedResponses: opened.filter { !$0.qualityFlags.isEmpty }.count,
            deliveredToOpened: median(
                opened.compactMap { prompt in
                    prompt.deliveredAt.flatMap { delivered in prompt.openedAt.map { $0.timeIntervalSince(delivered) } }
                }),
            openedToSubmitted: median(
                opened.compactMap { prompt in
                    prompt.openedAt.flatMap { opened in prompt.submittedAt.map { $0.timeIntervalSince(opened) } }
                }),
            lastSeen: lastSeen, flags: [])
        let dayAgo = now.addingTimeInterval(-quietDelivery)
        let dueToday = opened.contains { $0.opensAt > dayAgo }
        let reachedToday = opened.contains { ($0.deliveredAt ?? .distantPast) > dayAgo }
        if dueToday && !reachedToday { monitor.flags.append(.noDelivery) }
        if subscriptionGone { monitor.flags.append(.subscriptionGone) }
        if missed >= missedRun { monitor.flags.append(.missedInRow) }
        if (lastSeen.map { now.timeIntervalSince($0) > quietContact }) ?? true { monitor.flags.append(.noContact) }
        return monitor
    }

    /// The median of the times that are not negative (a clock that ran back).
    private static func median(_ values: [TimeInterval]) -> TimeInterval? {
        ResponseQuality.median(values.filter { $0 >= 0 })
    }
}
