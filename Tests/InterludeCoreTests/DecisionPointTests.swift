import Foundation
import Testing

@testable import InterludeCore

@Suite("Micro-randomised decision points")
struct DecisionPointTests {
    static let zone = TimeZone(identifier: "Europe/Vienna")!
    static let first = LocalDate(year: 2026, month: 3, day: 2)!
    static let times = ["09:00", "12:00", "15:00", "18:00", "21:00"].map { LocalTime($0)! }
    static let pool: [DecisionOption] = [
        .message(LocalizedText([.en: "Take a breath.", .de: "Atme durch."])),
        .prompt(instrumentKey: "mood-vas", openMinutes: 60),
    ]

    static func participants(_ count: Int) -> [UUID] {
        (0..<count).map {
            UUID(
                uuidString: "00000000-0000-4000-8000-" + String(repeating: "0", count: 12 - String($0).count)
                    + String($0))!
        }
    }

    /// Every point of `days` days for every participant, as the planner would decide them.
    static func study(
        _ plan: DecisionPointPlan, seed: UInt64, participants: [UUID], days: Int,
        quietHours: NotificationPreferences.QuietHours? = nil, answers: [RecentAnswer] = []
    ) -> [DecisionPoint] {
        participants.flatMap { participant in
            (0..<days).flatMap { day in
                plan.points(on: first.adding(days: day), in: zone).map {
                    plan.decide(
                        $0, participant: participant, seed: seed, zone: zone, quietHours: quietHours, answers: answers)
                }
            }
        }
    }

    @Test(
        "50 participants, 5 points a day for 42 days at 0.6: the treated share lies in the binomial 99 % interval, every logged chance is 0.6"
    )
    func simulatedStudy() {
        let plan = DecisionPointPlan(
            times: Self.times, probability: .constant(0.6), options: Self.pool, outcomeMinutes: 120)
        let points = Self.study(plan, seed: 2026, participants: Self.participants(50), days: 42)
        #expect(points.count == 10_500)
        #expect(points.allSatisfy { $0.available && $0.probability == 0.6 })
        let treated = points.filter { $0.assigned == true }
        // Binomial(10 500, 0.6): mean 6 300, standard deviation about 50.2; 99 % within ±129.
        #expect((6_171...6_429).contains(treated.count), "\(treated.count)")
        #expect(
            treated.allSatisfy { $0.option != nil }
                && points.filter { $0.assigned == false }.allSatisfy { $0.option == nil })
        let second = treated.filter { $0.option == 1 }.count
        #expect(abs(Double(second) / Double(treated.count) - 0.5) < 0.03)
        #expect(Set(points.map(\.key)).count == 42 * 5)
        #expect(points.allSatisfy { $0.outcomeEnds == $0.at.addingTimeInterval(7_200) })
    }

    @Test("the same seed replays every point; another seed does not")
    func replay() {
        let plan = DecisionPointPlan(
            times: Self.times, probability: .constant(0.5), options: Self.pool, outcomeMinutes: 60)
        let people = Self.participants(5)
        #expect(
            Self.study(plan, seed: 9, participants: people, days: 7)
                == Self.study(plan, seed: 9, participants: people, days: 7))
        #expect(
            Self.study(plan, seed: 9, participants: people, days: 7)
                != Self.study(plan, seed: 10, participants: people, days: 7))
    }

    @Test(
        "in quiet hours, or without a recent answer meeting the condition, a point is unavailable: no chance, no draw")
    func availability() {
        let quiet = NotificationPreferences.QuietHours(start: LocalTime("20:00")!, end: LocalTime("10:00")!)
        let plan = DecisionPointPlan(
            times: Self.times, probability: .constant(1), options: Self.pool, outcomeMinutes: 60)
        let points = Self.study(plan, seed: 1, participants: Self.participants(1), days: 1, quietHours: quiet)
        #expect(points.map(\.available) == [false, true, true, true, false])
        #expect(points.map(\.assigned) == [nil, true, true, true, nil] && points[0].probability == nil)

        let stressed = RecentCondition(
            instrumentKey: "stress-vas", withinHours: 3,
            condition: RuleCondition(
                mode: .all, clauses: [.init(subject: .score, id: "stress", operator: .greaterOrEqual, value: 60)]))
        var gated = plan
        gated.availability = DecisionAvailability(outsideQuietHours: false, recent: stressed)
        let noon = LocalDateTime(date: Self.first, time: LocalTime("12:00")!).instant(in: Self.zone)
        let answers = [
            RecentAnswer(
                completedAt: noon.addingTimeInterval(-3_600),
                facts: .init(instrumentKey: "stress-vas", items: [:], scores: ["stress": 70], bands: [:])),
            RecentAnswer(
                completedAt: noon.addingTimeInterval(3 * 3_600 - 60),
                facts: .init(instrumentKey: "stress-vas", items: [:], scores: ["stress": 20], bands: [:])),
        ]
        let gatedPoints = Self.study(gated, seed: 1, participants: Self.participants(1), days: 1, answers: answers)
        // 09:00 has no answer yet; 12:00 follows the 70; 15:00 the 20; by 18:00 and 21:00 it is older than three hours.
        #expect(gatedPoints.map(\.available) == [false, true, false, false, false])
    }

    @Test("a probability by rule logs the chance that applied at each point")
    func probabilityByRule() {
        let calm = RecentCondition(
            instrumentKey: "stress-vas", withinHours: 24,
            condition: RuleCondition(
                mode: .all, clauses: [.init(subject: .score, id: "stress", operator: .less, value: 30)]))
        let plan = DecisionPointPlan(
            times: Self.times, availability: .init(outsideQuietHours: false),
            probability: .byRecent(calm, then: 0.2, otherwise: 0.7),
            options: Self.pool, outcomeMinutes: 60)
        let noon = LocalDateTime(date: Self.first, time: LocalTime("12:00")!).instant(in: Self.zone)
        let answers = [
            RecentAnswer(
                completedAt: noon.addingTimeInterval(-60),
                facts: .init(instrumentKey: "stress-vas", items: [:], scores: ["stress": 10], bands: [:]))
        ]
        let points = Self.study(plan, seed: 3, participants: Self.participants(1), days: 1, answers: answers)
        #expect(points.map(\.probability) == [0.7, 0.2, 0.2, 0.2, 0.2])
    }

    @Test("the proximal outcome is the score of the answers inside the window, in order")
    func outcomes() {
        let plan = DecisionPointPlan(
            times: [LocalTime("12:00")!], probability: .constant(1), options: Self.pool, outcomeMinutes: 90)
        let point = plan.decide(
            plan.points(on: Self.first, in: Self.zone)[0], participant: Self.participants(1)[0], seed: 1,
            zone: Self.zone,
            quietHours: nil, answers: [])
        let answer = { (minutes: Double, value: Double, key: String) in
            RecentAnswer(
                completedAt: point.at.addingTimeInterval(minutes * 60),
                facts: .init(instrumentKey: key, items: [:], scores: ["mood": value], bands: [:]))
        }
        let answers = [
            answer(-5, 1, "mood-vas"), answer(30, 2, "mood-vas"), answer(20, 3, "mood-vas"), answer(45, 9, "other"),
            answer(91, 4, "mood-vas"),
        ]
        #expect(point.outcomes(answers, instrumentKey: "mood-vas", score: "mood") == [3, 2])
    }

    @Test("a plan is checked at the door, each problem named by its field")
    func problems() {
        let good = DecisionPointPlan(
            times: Self.times, probability: .constant(0.6), options: Self.pool, outcomeMinutes: 60)
        #expect(good.problems().isEmpty)
        var bad = good
        bad.times = [LocalTime("09:00")!, LocalTime("09:00")!]
        bad.options = []
        bad.outcomeMinutes = 0
        bad.probability = .constant(1.5)
        #expect(Set(bad.problems().map(\.field)) == ["times", "options", "outcomeMinutes", "probability"])
        var stale = good
        stale.availability.recent = RecentCondition(
            instrumentKey: "x", withinHours: 0, condition: .init(mode: .all, clauses: []))
        #expect(stale.problems().map(\.field) == ["withinHours"])
    }
}
