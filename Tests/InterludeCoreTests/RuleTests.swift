import Foundation
import Testing

@testable import InterludeCore

@Suite("Rules, interventions and message plans")
struct RuleTests {
    static let phq9: InstrumentDefinition = {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Resources/Instruments/phq-9.json")
        return try! JSONDecoder().decode(InstrumentDefinition.self, from: Data(contentsOf: url))
    }()

    func facts(_ values: [Int]) -> ResponseFacts {
        let answers = Dictionary(
            uniqueKeysWithValues: values.enumerated().map {
                ("phq9_\($0.offset + 1)", AnswerValue.text(String($0.element)))
            })
        return ResponseFacts(definition: Self.phq9, answers: answers, scores: Self.phq9.scores(for: answers))
    }

    @Test("the built-in rule fires for any answer above 0 to PHQ-9 item 9, and only then")
    func phq9Item9() {
        #expect(StudyRule.phq9Item9.evaluate(facts([3, 3, 3, 3, 3, 3, 3, 3, 0])) == nil)
        let match = StudyRule.phq9Item9.evaluate(facts([0, 0, 0, 0, 0, 0, 0, 0, 1]))
        #expect(match?.reason.contains("item phq9_9 = 1 (> 0)") == true, "\(String(describing: match))")
        #expect(
            StudyRule.phq9Item9.evaluate(
                ResponseFacts(instrumentKey: "gad-7", items: ["phq9_9": 3], scores: [:], bands: [:])) == nil)
        #expect(StudyRule.crisisItems(of: "phq-9").map(\.id) == ["phq9_9"])
        #expect(StudyRule.crisisItems(of: "gad-7").isEmpty)
        #expect(StudyRule.phq9Item9.watchesSubmissions(of: "phq-9"))
        #expect(!StudyRule.phq9Item9.watchesSubmissions(of: "gad-7"))
        let missed = StudyRule(
            name: "missed", trigger: .missedInARow(count: 3, instrumentKey: "phq-9"),
            action: .alert(priority: .normal, message: "call"))
        #expect(!missed.watchesSubmissions(of: "phq-9"))
    }

    @Test("clauses on scores, bands and items combine by all or any")
    func combinations() {
        let severe = RuleClause(subject: .score, id: "total", operator: .greaterOrEqual, value: 15)
        let moderateBand = RuleClause(subject: .band, id: "total", operator: .equals, level: "moderate")
        let sleep = RuleClause(subject: .item, id: "phq9_3", operator: .equals, value: 3)
        func rule(_ mode: RuleCondition.Mode, _ clauses: [RuleClause]) -> StudyRule {
            StudyRule(
                name: "check",
                trigger: .submitted(instrumentKey: "phq-9", condition: RuleCondition(mode: mode, clauses: clauses)),
                action: .alert(priority: .normal, message: "look"))
        }
        let moderate = facts([2, 2, 3, 1, 1, 1, 1, 0, 0])  // 11, moderate, sleep 3
        let high = facts([3, 3, 3, 3, 3, 1, 0, 0, 0])  // 16
        #expect(rule(.all, [severe, sleep]).evaluate(moderate) == nil)
        #expect(
            rule(.all, [severe, sleep]).evaluate(high)?.reason
                == "check: phq-9 score total = 16 (≥ 15) and item phq9_3 = 3 (= 3)")
        #expect(
            rule(.any, [severe, moderateBand]).evaluate(moderate)?.reason == "check: phq-9 band of total is moderate")
        #expect(rule(.any, [severe, moderateBand]).evaluate(facts([0, 0, 0, 0, 0, 0, 0, 0, 0])) == nil)
        #expect(rule(.all, []).evaluate(moderate)?.reason == "check: phq-9 submitted")
        let notMinimal = RuleClause(subject: .band, id: "total", operator: .notEquals, level: "minimal")
        #expect(rule(.all, [notMinimal]).evaluate(moderate) != nil)
        #expect(rule(.all, [notMinimal]).evaluate(facts([0, 0, 0, 0, 0, 0, 0, 0, 0])) == nil)
        // An unanswered item meets no comparison.
        let partial = ResponseFacts(instrumentKey: "phq-9", items: [:], scores: [:], bands: [:])
        #expect(
            rule(.any, [RuleClause(subject: .item, id: "phq9_3", operator: .less, value: 1)]).evaluate(partial) == nil)
    }

    @Test("runs of missed prompts count expired ones back to the last answered one")
    func missed() {
        let statuses: [PromptStatus] = [.expired, .cancelled, .expired, .completed, .expired, .expired]
        #expect(MissedStreak.length(ofNewestFirst: statuses) == 2)
        #expect(MissedStreak.length(ofNewestFirst: [.completed, .expired]) == 0)
        let rule = StudyRule(
            name: "three missed", trigger: .missedInARow(count: 3, instrumentKey: nil),
            action: .alert(priority: .normal, message: "call"))
        #expect(rule.evaluateMissed(streak: 2, instrumentKey: nil) == nil)
        #expect(
            rule.evaluateMissed(streak: 3, instrumentKey: nil)?.reason == "three missed: 3 prompts in a row expired")
        #expect(rule.evaluateMissed(streak: 3, instrumentKey: "phq-9") == nil)
        #expect(rule.evaluate(facts([0, 0, 0, 0, 0, 0, 0, 0, 0])) == nil)
    }

    @Test("rules travel as JSON and come back equal")
    func coding() throws {
        let rules = [
            StudyRule.phq9Item9,
            StudyRule(
                name: "missed", trigger: .missedInARow(count: 3, instrumentKey: "intersession-daily"),
                action: .intervention(InterventionDraft(kind: .task, text: "Take a walk"))),
            StudyRule(
                name: "follow up",
                trigger: .submitted(instrumentKey: "phq-9", condition: RuleCondition(mode: .any, clauses: [])),
                action: .prompt(instrumentKey: "gad-7", openHours: 24)),
        ]
        for rule in rules {
            #expect(try JSONDecoder().decode(StudyRule.self, from: JSONEncoder().encode(rule)) == rule)
        }
        let json = #"{"name":"x","trigger":{"kind":"sometimes"},"action":{"kind":"alert","message":"m"}}"#
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(StudyRule.self, from: Data(json.utf8)) }
    }

    @Test("validation names every wrong part of a rule")
    func validation() throws {
        let instruments = ["phq-9": Self.phq9]
        func fields(_ rule: StudyRule) -> [String] {
            do {
                _ = try StudyRule.validate(rule, instruments: instruments)
                return []
            } catch {
                return error.errors.map(\.field)
            }
        }
        let wrong = StudyRule(
            name: " ",
            trigger: .submitted(
                instrumentKey: "phq-9",
                condition: RuleCondition(
                    mode: .all,
                    clauses: [
                        RuleClause(subject: .item, id: "phq9_99", operator: .greater, value: 0),
                        RuleClause(subject: .band, id: "total", operator: .less, level: "severe"),
                        RuleClause(subject: .band, id: "total", operator: .equals, level: "catastrophic"),
                        RuleClause(subject: .score, id: "total", operator: .greater),
                    ])),
            action: .intervention(InterventionDraft(kind: .message, text: "")))
        #expect(
            fields(wrong) == [
                "name", "trigger.condition.clauses.0.id", "trigger.condition.clauses.1.operator",
                "trigger.condition.clauses.2.level", "trigger.condition.clauses.3.value", "action.kind", "action.text",
            ])
        #expect(
            fields(
                StudyRule(
                    name: "n", trigger: .missedInARow(count: 0, instrumentKey: "nope"),
                    action: .prompt(instrumentKey: "nope", openHours: 500)))
                == ["trigger.count", "trigger.instrumentKey", "action.instrumentKey", "action.openHours"])
        #expect(
            fields(
                StudyRule(
                    name: "n", trigger: .submitted(instrumentKey: "who-5", condition: .init(mode: .all, clauses: [])),
                    action: .alert(priority: .high, message: "m"))) == ["trigger.instrumentKey"])
        let trimmed = try StudyRule.validate(
            StudyRule(
                name: "  ok ", trigger: .missedInARow(count: 3, instrumentKey: nil),
                action: .alert(priority: .high, message: " call ")),
            instruments: instruments)
        #expect(trimmed.name == "ok")
        #expect(trimmed.action == .alert(priority: .high, message: "call"))
    }

    @Test("interventions: only written kinds, a text of 1 to 2000 characters; state follows the moments")
    func interventions() throws {
        #expect(
            try InterventionDraft.validate(kind: .task, text: "  Walk for ten minutes. ").text
                == "Walk for ten minutes.")
        #expect(throws: ValidationFailure(field: "text", code: .required)) {
            try InterventionDraft.validate(kind: .question, text: "  ")
        }
        #expect(throws: ValidationFailure(field: "text", code: .tooLong, limit: 2000)) {
            try InterventionDraft.validate(kind: .commendation, text: String(repeating: "a", count: 2001))
        }
        #expect(throws: ValidationFailure(field: "kind", code: .notAllowed)) {
            try InterventionDraft.validate(kind: .message, text: "hi")
        }
        #expect(throws: ValidationFailure(field: "kind", code: .notAllowed)) {
            try InterventionDraft.validate(kindNamed: "praise", text: "hi")
        }
        #expect(
            try InterventionDraft.validate(kindNamed: "question", text: "Why?")
                == InterventionDraft(kind: .question, text: "Why?"))
        let now = Date()
        #expect(InterventionState(seenAt: nil, completedAt: nil) == .sent)
        #expect(InterventionState(seenAt: now, completedAt: nil) == .seen)
        #expect(InterventionState(seenAt: now, completedAt: now) == .completed)
    }

    @Test("a participant chooses fewer messages (or none) and a narrower window only inside a plan that lets them")
    func chosenMessagePlans() throws {
        let time = { (text: String) in LocalTime(text)! }
        let study = MessagePlan(perDay: 4, windowStart: time("09:00"), windowEnd: time("21:00"), personChooses: true)
        let mine = try study.chosen(perDay: 2, windowStart: time("18:00"), windowEnd: time("20:30"))
        #expect(mine == MessagePlan(perDay: 2, windowStart: time("18:00"), windowEnd: time("20:30")))
        #expect(
            mine.moments(on: LocalDate("2026-11-24")!, seed: "p").allSatisfy {
                $0 >= time("18:00") && $0 <= time("20:30")
            })
        #expect(
            try study.chosen(perDay: 0, windowStart: time("09:00"), windowEnd: time("21:00")).moments(
                on: LocalDate("2026-11-24")!, seed: "p"
            ).isEmpty)
        #expect(
            throws: ValidationFailure([
                FieldError(field: "perDay", code: .outOfRange, limit: 4),
                FieldError(field: "windowStart", code: .outsideWindow),
                FieldError(field: "windowEnd", code: .outsideWindow),
            ])
        ) {
            try study.chosen(perDay: 5, windowStart: time("07:00"), windowEnd: time("22:00"))
        }
        #expect(throws: ValidationFailure(field: "windowEnd", code: .invalidValue)) {
            try study.chosen(perDay: 1, windowStart: time("20:00"), windowEnd: time("10:00"))
        }
        #expect(throws: ValidationFailure(field: "windowEnd", code: .tooShort)) {
            try study.chosen(perDay: 4, windowStart: time("10:00"), windowEnd: time("10:02"))
        }
        #expect(throws: ValidationFailure(field: "perDay", code: .notAllowed)) {
            try MessagePlan(perDay: 4, windowStart: time("09:00"), windowEnd: time("21:00")).chosen(
                perDay: 1, windowStart: time("10:00"), windowEnd: time("11:00"))
        }
        let stored = try JSONDecoder().decode(
            MessagePlan.self, from: Data(#"{"perDay":2,"windowStart":"09:00","windowEnd":"20:00"}"#.utf8))
        #expect(!stored.personChooses, "a plan stored before the choice existed lets nobody choose")
    }

    @Test("message plans: N distinct moments inside the window, the same for the same seed, a fair pick")
    func messagePlans() throws {
        let plan = MessagePlan(perDay: 3, windowStart: LocalTime("09:00")!, windowEnd: LocalTime("20:59")!)
        try plan.validate()
        let day = LocalDate("2026-11-23")!
        var all: Set<[LocalTime]> = []
        for person in 0..<50 {
            let moments = plan.moments(on: day, seed: "p\(person)")
            #expect(moments.count == 3 && Set(moments).count == 3)
            #expect(moments.allSatisfy { $0 >= plan.windowStart && $0 <= plan.windowEnd })
            #expect(moments == moments.sorted())
            #expect(plan.moments(on: day, seed: "p\(person)") == moments)
            all.insert(moments)
        }
        #expect(all.count > 40)
        let tight = MessagePlan(perDay: 5, windowStart: LocalTime("09:00")!, windowEnd: LocalTime("09:04")!)
        #expect(tight.moments(on: day, seed: "x").count == 5)
        #expect(throws: ValidationFailure(field: "windowEnd", code: .tooShort)) {
            try MessagePlan(perDay: 6, windowStart: LocalTime("09:00")!, windowEnd: LocalTime("09:04")!).validate()
        }
        #expect(
            throws: ValidationFailure([
                FieldError(field: "perDay", code: .outOfRange, limit: 12),
                FieldError(field: "windowEnd", code: .invalidValue),
            ])
        ) {
            try MessagePlan(perDay: 13, windowStart: LocalTime("10:00")!, windowEnd: LocalTime("09:00")!).validate()
        }
        #expect(
            try MessagePlan.parse(perDay: " 2 ", windowStart: "09:00", windowEnd: "20:00")
                == MessagePlan(perDay: 2, windowStart: LocalTime("09:00")!, windowEnd: LocalTime("20:00")!))
        #expect(
            throws: ValidationFailure([
                FieldError(field: "perDay", code: .invalidFormat),
                FieldError(field: "windowStart", code: .invalidFormat),
            ])
        ) {
            try MessagePlan.parse(perDay: "two", windowStart: "9", windowEnd: "20:00")
        }
        #expect(throws: ValidationFailure(field: "windowEnd", code: .invalidValue)) {
            try MessagePlan.parse(perDay: "2", windowStart: "20:00", windowEnd: "09:00")
        }
        var counts = [0, 0, 0, 0]
        for index in 0..<400 { counts[MessagePlan.pick(from: 4, seed: "m\(index)")] += 1 }
        #expect(counts.allSatisfy { $0 > 60 }, "\(counts)")
    }
}

@Suite("Intersession timeline")
struct IntersessionDayTests {
    @Test("Dailies group by local day with the share of thinking of therapy and the mean feeling")
    func days() {
        let vienna = TimeZone(identifier: "Europe/Vienna")!
        func at(_ text: String) -> Date { LocalDateTime(text)!.instant(in: vienna) }
        let entries = [
            IntersessionDay.Entry(
                completedAt: at("2026-11-20T09:10"), answers: ["thought": .bool(true), "feeling": .text("4")]),
            IntersessionDay.Entry(completedAt: at("2026-11-20T13:40"), answers: ["thought": .bool(false)]),
            IntersessionDay.Entry(
                completedAt: at("2026-11-20T23:50"), answers: ["thought": .bool(true), "feeling": .text("1")]),
            IntersessionDay.Entry(
                completedAt: at("2026-11-21T00:10"), answers: ["thought": .bool(false), "feeling": .text("5")]),
            IntersessionDay.Entry(completedAt: at("2026-11-21T08:00"), answers: ["mood": .number(40)]),
        ].compactMap { $0 }
        #expect(entries.count == 4)
        let days = IntersessionDay.days(entries, in: vienna)
        #expect(days.map(\.date.description) == ["2026-11-20", "2026-11-21"])
        #expect(days[0].answered == 3 && days[0].thought == 2 && days[0].meanFeeling == 2.5)
        #expect(abs(days[0].thoughtShare - 2.0 / 3.0) < 0.0001)
        #expect(
            days[1].answered == 1 && days[1].thought == 0 && days[1].meanFeeling == nil && days[1].thoughtShare == 0)
    }
}
