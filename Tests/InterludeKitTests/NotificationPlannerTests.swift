import Foundation
import InterludeCore
import PropertyBased
import Testing

@testable import InterludeKit

/// The planner's promises, over random prompt sets around the daylight-saving changes of three zones: Vienna and New
/// York move an hour on different dates, Lord Howe Island half an hour.
@Suite("Local notification planner")
struct NotificationPlannerTests {
    /// Each zone with the instants of its 2026 changes.
    static let zones: [(zone: TimeZone, changes: [Date])] = [
        (TimeZone(identifier: "Europe/Vienna")!, [stamp("2026-03-29T01:00:00Z"), stamp("2026-10-25T01:00:00Z")]),
        (TimeZone(identifier: "America/New_York")!, [stamp("2026-03-08T07:00:00Z"), stamp("2026-11-01T06:00:00Z")]),
        (TimeZone(identifier: "Australia/Lord_Howe")!, [stamp("2026-04-04T15:00:00Z"), stamp("2026-10-03T15:30:00Z")]),
    ]

    static func stamp(_ text: String) -> Date { ISO8601DateFormatter().date(from: text)! }

    /// Prompts from a few plans, some open, some ahead, some answered or closed, around `now`.
    static func prompts(seed: UInt64, now: Date) -> [Prompt] {
        var random = SplitMix(seed)
        let plans = ["daily", "evening", "weekly", "momentary"].prefix(1 + Int(random.next() % 4))
        return (0..<Int(random.next() % 120)).map { index in
            let plan = plans[Int(random.next() % UInt64(plans.count))]
            let opensAt = now.addingTimeInterval(Double(Int(random.next() % (10 * 86_400))) - 2 * 86_400)
            let window = Double(15 * 60 + Int(random.next() % (30 * 3600)))
            let statuses: [PromptStatus] = [.scheduled, .scheduled, .scheduled, .open, .completed, .cancelled]
            return Prompt(
                id: UUID(), instrumentKey: String(plan), instrumentVersion: 1, title: "Prompt \(index)",
                opensAt: opensAt,
                closesAt: opensAt.addingTimeInterval(window),
                status: statuses[Int(random.next() % UInt64(statuses.count))],
                source: .schedule, blocked: random.next() % 10 == 0)
        }
    }

    static let quietHours = [
        nil, NotificationPreferences.QuietHours(start: LocalTime("22:00")!, end: LocalTime("07:00")!),
        NotificationPreferences.QuietHours(start: LocalTime("01:00")!, end: LocalTime("02:30")!),
        NotificationPreferences.QuietHours(start: LocalTime("12:00")!, end: LocalTime("13:00")!),
    ]

    @Test(
        "never over the budget, nothing in the past or beyond the look-ahead, inside each prompt's window, never in quiet hours"
    )
    func bounds() async {
        await propertyCheck(
            count: 400, input: Gen.int(in: 0...2), Gen.int(in: 0...1), Gen.int(in: -4 * 24...4 * 24),
            Gen.int(in: 0...1_000_000),
            Gen.int(in: 0...3), Gen.int(in: 1...50)
        ) { zoneIndex, changeIndex, hours, seed, quiet, budget in
            let (zone, changes) = Self.zones[zoneIndex]
            let now = changes[changeIndex].addingTimeInterval(Double(hours) * 3600 + 17)
            let prompts = Self.prompts(seed: UInt64(seed), now: now)
            let planner = NotificationPlanner(budget: budget, quietHours: Self.quietHours[quiet])
            let plan = planner.plan(prompts, now: now, timeZone: zone)
            let byID = Dictionary(uniqueKeysWithValues: prompts.map { ($0.id, $0) })
            #expect(plan.count <= budget)
            #expect(Set(plan.map(\.id)).count == plan.count)
            for notification in plan {
                let prompt = byID[notification.promptID]!
                #expect(notification.fireAt > now)
                #expect(notification.fireAt <= now.addingTimeInterval(7 * 86_400))
                #expect(notification.fireAt >= prompt.opensAt && notification.fireAt < prompt.closesAt)
                #expect([.scheduled, .open].contains(prompt.status(at: now)) && !prompt.blocked)
                // The wall-clock time, read independently of the planner from the zone's offset at that instant.
                let offset = TimeInterval(zone.secondsFromGMT(for: notification.fireAt))
                let wall = Int(notification.fireAt.timeIntervalSince1970 + offset)
                let minuteOfDay = ((wall % 86_400) + 86_400) % 86_400 / 60
                #expect(notification.local.hour * 60 + notification.local.minute == minuteOfDay)
                if let quietHours = Self.quietHours[quiet] {
                    #expect(
                        !quietHours.contains(LocalTime(minutes: minuteOfDay)!),
                        "\(notification.local) in \(zone.identifier)")
                }
            }
        }
    }

    @Test("fair across plans: a plan cut short by the budget has at most one fewer than any other")
    func fairness() async {
        await propertyCheck(count: 300, input: Gen.int(in: 0...2), Gen.int(in: 0...1_000_000), Gen.int(in: 1...20)) {
            zoneIndex, seed, budget in
            let (zone, changes) = Self.zones[zoneIndex]
            let now = changes[0].addingTimeInterval(-86_400)
            let prompts = Self.prompts(seed: UInt64(seed), now: now)
            let chosen = NotificationPlanner(budget: budget).plan(prompts, now: now, timeZone: zone)
            let wanted = Self.wanted(prompts, now: now)
            let plans = Dictionary(uniqueKeysWithValues: prompts.map { ($0.id, $0.instrumentKey) })
            let planned = Dictionary(grouping: chosen) { plans[$0.promptID]! }.mapValues(\.count)
            #expect(chosen.count == min(budget, wanted.values.reduce(0, +)))
            for (plan, count) in wanted {
                let have = planned[plan] ?? 0
                guard have < count else { continue }
                for (other, otherCount) in planned {
                    #expect(otherCount <= have + 1, "\(other) has \(otherCount), \(plan) only \(have)")
                }
            }
        }
    }

    /// What each plan would want without a budget, counted here from the rules (no quiet hours).
    static func wanted(_ prompts: [Prompt], now: Date) -> [String: Int] {
        let horizon = now.addingTimeInterval(7 * 86_400)
        var wanted: [String: Int] = [:]
        for prompt in prompts where [.scheduled, .open].contains(prompt.status(at: now)) && !prompt.blocked {
            if prompt.opensAt > now, prompt.opensAt <= horizon { wanted[prompt.instrumentKey, default: 0] += 1 }
            let reminder = prompt.closesAt.addingTimeInterval(-3600)
            if prompt.closesAt.timeIntervalSince(prompt.opensAt) >= 7200, reminder > now, reminder <= horizon {
                wanted[prompt.instrumentKey, default: 0] += 1
            }
        }
        return wanted
    }

    @Test("a reminder moved out of the quiet hours lands on their end on the right side of a daylight-saving change")
    func quietHoursAcrossChanges() {
        let vienna = TimeZone(identifier: "Europe/Vienna")!
        // Sunday 29 March 2026: at 02:00 Vienna's clocks jump to 03:00. A reminder wanted at 01:30 waits until 07:00 local,
        // which is 05:00 UTC that day (06:00 UTC the day before).
        let planner = NotificationPlanner(
            reminderLead: 3600, quietHours: .init(start: LocalTime("22:00")!, end: LocalTime("07:00")!))
        let opensAt = Self.stamp("2026-03-28T20:00:00Z")
        let prompt = Prompt(
            id: UUID(), instrumentKey: "daily", instrumentVersion: 1, title: "Daily", opensAt: opensAt,
            closesAt: Self.stamp("2026-03-29T01:30:00Z").addingTimeInterval(3600), status: .scheduled, source: .schedule
        )
        let plan = planner.plan([prompt], now: Self.stamp("2026-03-28T19:00:00Z"), timeZone: vienna)
        // The opening notice at 21:00 local; the reminder (01:30 UTC = 03:30 local) falls in the quiet hours, whose end
        // comes after the prompt closed, so it is left out.
        #expect(plan.map(\.kind) == [.prompt])
        // Closing at 07:30 local (05:30 UTC), its reminder at 06:30 local moves to 07:00 local: 05:00 UTC after the
        // change. Read with the offset of the evening before, 07:00 would be 06:00 UTC, after the prompt closed.
        let later = Prompt(
            id: UUID(), instrumentKey: "daily", instrumentVersion: 1, title: "Daily", opensAt: opensAt,
            closesAt: Self.stamp("2026-03-29T05:30:00Z"), status: .scheduled, source: .schedule)
        let moved = planner.plan([later], now: Self.stamp("2026-03-28T19:00:00Z"), timeZone: vienna)
        #expect(moved.map(\.kind) == [.prompt, .reminder])
        #expect(moved.last?.fireAt == Self.stamp("2026-03-29T05:00:00Z"))
        #expect(moved.last.map { "\($0.local)" } == "2026-03-29T07:00")
        let lordHowe = TimeZone(identifier: "Australia/Lord_Howe")!
        // 4 October 2026 (local): Lord Howe moves from +10:30 to +11:00 at 02:00.
        let early = Prompt(
            id: UUID(), instrumentKey: "daily", instrumentVersion: 1, title: "Daily",
            opensAt: Self.stamp("2026-10-03T14:00:00Z"),
            closesAt: Self.stamp("2026-10-04T02:00:00Z"), status: .scheduled, source: .schedule)
        let shifted = planner.plan([early], now: Self.stamp("2026-10-03T13:00:00Z"), timeZone: lordHowe)
        // Opening at 00:30 local (quiet) moves to 07:00 local on 4 October, which is 20:00 UTC on the 3rd.
        #expect(shifted.first?.fireAt == Self.stamp("2026-10-03T20:00:00Z"))
        #expect(shifted.first.map { "\($0.local)" } == "2026-10-04T07:00")
    }

    @Test("the budget and look-ahead are capped at 50 and 7 days")
    func caps() {
        let planner = NotificationPlanner(budget: 64, lookAhead: 30 * 86_400)
        #expect(planner.budget == 50 && planner.lookAhead == 7 * 86_400)
        #expect(NotificationPlanner(budget: -3).budget == 0)
    }
}

/// A small seeded generator for building inputs from one number.
struct SplitMix {
    private var state: UInt64
    init(_ seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
