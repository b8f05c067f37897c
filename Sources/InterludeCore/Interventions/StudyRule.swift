import Foundation

/// A study's reaction to what patients do: "when PHQ-9 is submitted and its total is 15 or more, alert the
/// therapist", or "when three prompts in a row expire, alert the therapist".
public struct StudyRule: Codable, Hashable, Sendable {
    public static let nameMaxLength = 200
    public static let mostMissedInARow = 50
    public static let mostPromptHours = 168

    public var name: String
    public var trigger: RuleTrigger
    public var action: RuleAction

    public init(name: String, trigger: RuleTrigger, action: RuleAction) {
        self.name = name
        self.trigger = trigger
        self.action = action
    }

    /// The built-in rule every study has: any answer above "not at all" to PHQ-9 item 9 (thoughts of being better
    /// off dead or of self-harm) raises a high-priority alert.
    public static let phq9Item9 = StudyRule(
        name: "PHQ-9 item 9",
        trigger: .submitted(
            instrumentKey: "phq-9",
            condition: RuleCondition(
                mode: .all, clauses: [RuleClause(subject: .item, id: "phq9_9", operator: .greater, value: 0)])),
        action: .alert(priority: .high, message: "PHQ-9 item 9 answered above 0: ask about thoughts of self-harm."))

    /// Items whose answer above a threshold means the patient should see crisis help at once.
    public static func crisisItems(of instrumentKey: String) -> [RuleClause] {
        guard case .submitted(let key, let condition) = phq9Item9.trigger, key == instrumentKey else { return [] }
        return condition.clauses
    }
}

public enum RuleTrigger: Hashable, Sendable {
    /// A response to the instrument that meets the condition.
    case submitted(instrumentKey: String, condition: RuleCondition)
    /// `count` prompts in a row (of one instrument, or of any) closed without an answer.
    case missedInARow(count: Int, instrumentKey: String?)
}

public enum RuleAction: Hashable, Sendable {
    case intervention(InterventionDraft)
    case alert(priority: AlertPriority, message: String)
    /// Opens a prompt of another instrument at once, for `openHours`.
    case prompt(instrumentKey: String, openHours: Int)

    public var kind: String {
        switch self {
        case .intervention: "intervention"
        case .alert: "alert"
        case .prompt: "prompt"
        }
    }
}

public enum AlertPriority: String, Codable, Sendable, CaseIterable {
    case high
    case normal
}

/// Clauses combined by all or any; no clauses at all is always met.
public struct RuleCondition: Codable, Hashable, Sendable {
    public enum Mode: String, Codable, Sendable, CaseIterable {
        case all
        case any
    }

    public var mode: Mode
    public var clauses: [RuleClause]

    public init(mode: Mode, clauses: [RuleClause]) {
        self.mode = mode
        self.clauses = clauses
    }

    /// The descriptions of the clauses these facts meet when the condition holds (none for no clauses); nil when not.
    public func met(by facts: ResponseFacts) -> [String]? {
        let met = clauses.compactMap { $0.evaluate(facts) }
        let holds = clauses.isEmpty || (mode == .all ? met.count == clauses.count : !met.isEmpty)
        return holds ? met : nil
    }
}

/// One comparison: a score's value, a score's band (by level), or an item's numeric answer.
public struct RuleClause: Codable, Hashable, Sendable {
    public enum Subject: String, Codable, Sendable, CaseIterable {
        case score
        case band
        case item
    }

    public enum Operator: String, Codable, Sendable, CaseIterable {
        case equals
        case notEquals
        case less
        case lessOrEqual
        case greater
        case greaterOrEqual

        public var symbol: String {
            switch self {
            case .equals: "="
            case .notEquals: "≠"
            case .less: "<"
            case .lessOrEqual: "≤"
            case .greater: ">"
            case .greaterOrEqual: "≥"
            }
        }

        func holds(_ lhs: Double, _ rhs: Double) -> Bool {
            switch self {
            case .equals: lhs == rhs
            case .notEquals: lhs != rhs
            case .less: lhs < rhs
            case .lessOrEqual: lhs <= rhs
            case .greater: lhs > rhs
            case .greaterOrEqual: lhs >= rhs
            }
        }
    }

    public var subject: Subject
    /// The score's or the item's id.
    public var id: String
    public var `operator`: Operator
    /// The number a score or an item is compared with.
    public var value: Double?
    /// The band level a band is compared with (`equals` or `notEquals`).
    public var level: String?

    public init(subject: Subject, id: String, operator: Operator, value: Double? = nil, level: String? = nil) {
        self.subject = subject
        self.id = id
        self.operator = `operator`
        self.value = value
        self.level = level
    }
}

/// What a rule may look at in one response: the numeric value of each answered item, each score, each band.
public struct ResponseFacts: Sendable, Equatable {
    public var instrumentKey: String
    public var items: [String: Double]
    public var scores: [String: Double]
    public var bands: [String: String]

    public init(instrumentKey: String, items: [String: Double], scores: [String: Double], bands: [String: String]) {
        self.instrumentKey = instrumentKey
        self.items = items
        self.scores = scores
        self.bands = bands
    }

    public init(definition: InstrumentDefinition, answers: Answers, scores: [ScoreResult]) {
        var items: [String: Double] = [:]
        for (itemID, answer) in answers {
            if let item = definition.item(itemID), let value = definition.numericValue(of: answer, for: item) {
                items[itemID] = value
            }
        }
        self.init(
            instrumentKey: definition.key, items: items,
            scores: Dictionary(uniqueKeysWithValues: scores.compactMap { score in score.value.map { (score.id, $0) } }),
            bands: Dictionary(
                uniqueKeysWithValues: scores.compactMap { score in score.band?.level.map { (score.id, $0) } }))
    }
}

/// Why a rule fired, in the words of its clauses and the values they met.
public struct RuleMatch: Sendable, Equatable {
    public var reason: String
}

extension StudyRule {
    /// Whether submissions of `instrumentKey` are what the rule looks at.
    public func watchesSubmissions(of instrumentKey: String) -> Bool {
        if case .submitted(let watched, _) = trigger { watched == instrumentKey } else { false }
    }

    /// Whether the rule fires for this response, and why.
    public func evaluate(_ facts: ResponseFacts) -> RuleMatch? {
        guard case .submitted(let instrumentKey, let condition) = trigger, instrumentKey == facts.instrumentKey else {
            return nil
        }
        guard let met = condition.met(by: facts) else { return nil }
        let what = met.isEmpty ? "submitted" : met.joined(separator: condition.mode == .all ? " and " : " or ")
        return RuleMatch(reason: "\(name): \(instrumentKey) \(what)")
    }

    /// Whether the rule fires for a run of `streak` missed prompts of `instrumentKey` (nil: counted over all).
    public func evaluateMissed(streak: Int, instrumentKey: String?) -> RuleMatch? {
        guard case .missedInARow(let count, let key) = trigger, key == instrumentKey, streak >= count else {
            return nil
        }
        return RuleMatch(reason: "\(name): \(streak) prompts\(key.map { " of \($0)" } ?? "") in a row expired")
    }
}

extension StudyRule {
    /// The clauses of a submission rule that this response meets: what to tell whoever reads its alert.
    public func metClauses(_ facts: ResponseFacts) -> [RuleClause] {
        guard case .submitted(_, let condition) = trigger else { return [] }
        return condition.clauses.filter { $0.evaluate(facts) != nil }
    }
}

extension RuleClause {
    /// A description of the clause with the value it met, or nil when it does not hold.
    func evaluate(_ facts: ResponseFacts) -> String? {
        switch subject {
        case .band:
            guard let actual = facts.bands[id], let level else { return nil }
            let holds = `operator` == .notEquals ? actual != level : `operator` == .equals && actual == level
            return holds ? "band of \(id) is \(actual)" : nil
        case .score, .item:
            let source = subject == .score ? facts.scores : facts.items
            guard let actual = source[id], let value, `operator`.holds(actual, value) else { return nil }
            return "\(subject.rawValue) \(id) = \(actual.plainText()) (\(`operator`.symbol) \(value.plainText()))"
        }
    }
}

/// How many prompts in a row went unanswered, newest first: counts expired ones until the first answered one.
public enum MissedStreak {
    public static func length(ofNewestFirst statuses: [PromptStatus]) -> Int {
        var count = 0
        for status in statuses {
            if status == .expired {
                count += 1
            } else if status == .completed {
                break
            }
        }
        return count
    }
}
