import Foundation
import InterludeCore

/// Chooses which notifications the device shows by itself: a phone keeps only so many pending (iOS 64), so the planner
/// takes at most `budget` of them within the look-ahead, fairly across the plans prompts come from, moves none into
/// the person's quiet hours, and computes every time in the person's IANA zone, so a daylight-saving change never
/// shifts one. Pure: the same prompts, instant and zone give the same plan.
public struct NotificationPlanner: Sendable {
    public enum Kind: String, Codable, Hashable, Sendable {
        /// The prompt opens.
        case prompt
        /// The prompt is still open and closes soon.
        case reminder
    }

    /// One notification to hand to the system.
    public struct Planned: Hashable, Sendable, Identifiable {
        /// Stable across plannings: `<prompt id>.<kind>`.
        public var id: String
        public var promptID: UUID
        public var kind: Kind
        public var title: String
        /// The instant it fires; give the system this instant (an interval), not wall-clock fields.
        public var fireAt: Date
        /// The wall-clock time it fires at in the person's zone, for display.
        public var local: LocalDateTime
        /// Until when the prompt can be answered.
        public var closesAt: Date
    }

    /// The most notifications planned at once; iOS keeps 64 and some are left for the app's own.
    public var budget: Int
    /// How far ahead to plan (at most 7 days).
    public var lookAhead: TimeInterval
    /// A reminder this long before a prompt closes, for prompts open at least twice as long; nil for none.
    public var reminderLead: TimeInterval?
    public var quietHours: NotificationPreferences.QuietHours?

    public static let maximumBudget = 50
    public static let maximumLookAhead: TimeInterval = 7 * 86_400

    public init(
        budget: Int = maximumBudget, lookAhead: TimeInterval = maximumLookAhead, reminderLead: TimeInterval? = 3600,
        quietHours: NotificationPreferences.QuietHours? = nil
    ) {
        self.budget = min(max(budget, 0), Self.maximumBudget)
        self.lookAhead = min(max(lookAhead, 0), Self.maximumLookAhead)
        self.reminderLead = reminderLead.map { max($0, 60) }
        self.quietHours = quietHours
    }

    /// The notifications to have pending at `now`, earliest first.
    public func plan(_ prompts: [Prompt], now: Date, timeZone: TimeZone) -> [Planned] {
        let horizon = now.addingTimeInterval(lookAhead)
        var byPlan: [String: [Planned]] = [:]
        for prompt in prompts where !prompt.blocked {
            let status = prompt.status(at: now)
            guard status == .scheduled || status == .open else { continue }
            var wanted: [(Kind, Date)] = []
            if prompt.opensAt > now { wanted.append((.prompt, prompt.opensAt)) }
            if let reminderLead, prompt.closesAt.timeIntervalSince(prompt.opensAt) >= 2 * reminderLead {
                wanted.append((.reminder, prompt.closesAt.addingTimeInterval(-reminderLead)))
            }
            for (kind, wantedAt) in wanted {
                let fireAt = outsideQuietHours(wantedAt, in: timeZone)
                guard fireAt > now, fireAt <= horizon, fireAt < prompt.closesAt else { continue }
                byPlan["\(prompt.instrumentKey)", default: []].append(
                    Planned(
                        id: "\(prompt.id.uuidString.lowercased()).\(kind.rawValue)", promptID: prompt.id, kind: kind,
                        title: prompt.title,
                        fireAt: fireAt, local: LocalDateTime(fireAt, in: timeZone), closesAt: prompt.closesAt))
            }
        }
        // Round by round, each plan's next notification, the earlier first: a busy plan cannot crowd out a quiet one.
        let queues = byPlan.values.map { $0.sorted { ($0.fireAt, $0.id) < ($1.fireAt, $1.id) } }
        var chosen: [Planned] = []
        var round = 0
        while chosen.count < budget {
            let next = queues.compactMap { round < $0.count ? $0[round] : nil }.sorted {
                ($0.fireAt, $0.id) < ($1.fireAt, $1.id)
            }
            guard !next.isEmpty else { break }
            chosen += next.prefix(budget - chosen.count)
            round += 1
        }
        return chosen.sorted { ($0.fireAt, $0.id) < ($1.fireAt, $1.id) }
    }

    /// `instant`, or the end of the quiet hours it falls into, read on the right local day in `timeZone`.
    func outsideQuietHours(_ instant: Date, in timeZone: TimeZone) -> Date {
        guard let quietHours else { return instant }
        let local = LocalDateTime(instant, in: timeZone)
        guard let time = LocalTime(hour: local.hour, minute: local.minute), quietHours.contains(time) else {
            return instant
        }
        // Quiet hours that cross midnight end on the next day when they began on this one.
        let endsNextDay = quietHours.start > quietHours.end && time >= quietHours.start
        let day = endsNextDay ? LocalDate(daysSinceEpoch: local.date.daysSinceEpoch + 1) : local.date
        let end = LocalDateTime(date: day, hour: quietHours.end.hour, minute: quietHours.end.minute)!
        // When the clocks go back, the end can happen twice: take the one after `instant`.
        let offsets = Set(
            [-86_400.0, 0, 86_400].map { TimeInterval(timeZone.secondsFromGMT(for: instant.addingTimeInterval($0))) })
        let wallClock = end.instant(in: TimeZone(identifier: "UTC")!)
        let later = offsets.map { wallClock.addingTimeInterval(-$0) }
            .filter { $0 > instant && LocalDateTime($0, in: timeZone) == end }
            .min()
        return later ?? max(end.instant(in: timeZone), instant)
    }
}
