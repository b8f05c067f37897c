import Foundation

/// A micro-randomised plan: at each decision point of the day (the participant's local times) the participant is
/// available or not, and when available is randomised with a stated probability to receive one option of a pool
/// (a message or a prompt) or nothing; what follows in the outcome window is the point's proximal outcome.
public struct DecisionPointPlan: Codable, Hashable, Sendable {
    public var times: [LocalTime]
    public var availability: DecisionAvailability
    public var probability: DecisionProbability
    /// What a point randomised to treatment delivers: one option, drawn evenly from the pool.
    public var options: [DecisionOption]
    /// Minutes after the point whose answers make its proximal outcome.
    public var outcomeMinutes: Int
    /// The score whose values in the window are the proximal outcome the export gives; none when nil.
    public var outcome: DecisionOutcome?

    public init(
        times: [LocalTime], availability: DecisionAvailability = .init(), probability: DecisionProbability,
        options: [DecisionOption], outcomeMinutes: Int, outcome: DecisionOutcome? = nil
    ) {
        self.times = times
        self.availability = availability
        self.probability = probability
        self.options = options
        self.outcomeMinutes = outcomeMinutes
        self.outcome = outcome
    }

    public static let timesMaxCount = 24
    public static let optionsMaxCount = 50
    public static let outcomeMinutesRange = 1...1440
    public static let withinHoursRange = 1...168

    /// Every problem of the plan, named by its field.
    public func problems() -> [FieldError] {
        var validator = FieldValidator()
        if times.isEmpty { validator.add("times", .required) }
        if times.count > Self.timesMaxCount { validator.add("times", .tooLong, limit: Self.timesMaxCount) }
        if Set(times).count != times.count { validator.add("times", .duplicate) }
        if options.isEmpty { validator.add("options", .required) }
        if options.count > Self.optionsMaxCount { validator.add("options", .tooLong, limit: Self.optionsMaxCount) }
        if !Self.outcomeMinutesRange.contains(outcomeMinutes) {
            validator.add("outcomeMinutes", .outOfRange, limit: Self.outcomeMinutesRange.upperBound)
        }
        let chances: [Double] =
            switch probability {
            case .constant(let chance): [chance]
            case .byRecent(_, let then, let otherwise): [then, otherwise]
            }
        if chances.contains(where: { !(0...1).contains($0) }) { validator.add("probability", .outOfRange) }
        let recent = [availability.recent, probability.recent].compactMap { $0 }
        if recent.contains(where: { !Self.withinHoursRange.contains($0.withinHours) }) {
            validator.add("withinHours", .outOfRange, limit: Self.withinHoursRange.upperBound)
        }
        for (index, option) in options.enumerated() {
            switch option {
            case .message(let texts) where texts.isEmpty:
                validator.add("options.\(index).texts", .required)
            case .prompt(let key, let minutes) where key.isEmpty || !Self.openMinutesRange.contains(minutes):
                validator.add("options.\(index)", .invalidValue)
            default: break
            }
        }
        if let outcome, outcome.instrumentKey.isEmpty || outcome.score.isEmpty {
            validator.add("outcome", .invalidValue)
        }
        return validator.errors
    }

    public static let openMinutesRange = 5...1440
}

/// Which score's values in a point's outcome window make its proximal outcome.
public struct DecisionOutcome: Codable, Hashable, Sendable {
    public var instrumentKey: String
    public var score: String

    public init(instrumentKey: String, score: String) {
        self.instrumentKey = instrumentKey
        self.score = score
    }
}

/// When a participant can be randomised at a point.
public struct DecisionAvailability: Codable, Hashable, Sendable {
    /// Not during the participant's quiet hours.
    public var outsideQuietHours: Bool
    /// Only when the latest answer of an instrument within some hours meets a condition.
    public var recent: RecentCondition?

    public init(outsideQuietHours: Bool = true, recent: RecentCondition? = nil) {
        self.outsideQuietHours = outsideQuietHours
        self.recent = recent
    }
}

/// A condition on the latest answer of an instrument given within the last `withinHours` hours; without such an
/// answer it does not hold.
public struct RecentCondition: Codable, Hashable, Sendable {
    public var instrumentKey: String
    public var withinHours: Int
    public var condition: RuleCondition

    public init(instrumentKey: String, withinHours: Int, condition: RuleCondition) {
        self.instrumentKey = instrumentKey
        self.withinHours = withinHours
        self.condition = condition
    }

    public func holds(at moment: Date, answers: [RecentAnswer]) -> Bool {
        let earliest = moment.addingTimeInterval(-Double(withinHours) * 3600)
        let latest = answers.filter {
            $0.facts.instrumentKey == instrumentKey && $0.completedAt <= moment && $0.completedAt > earliest
        }.max { $0.completedAt < $1.completedAt }
        guard let latest else { return false }
        return condition.met(by: latest.facts) != nil
    }
}

public enum DecisionProbability: Codable, Hashable, Sendable {
    case constant(Double)
    /// `then` when the condition holds at the point, `otherwise` when not.
    case byRecent(RecentCondition, then: Double, otherwise: Double)

    /// The condition the chance depends on, if any.
    public var recent: RecentCondition? {
        if case .byRecent(let condition, _, _) = self { condition } else { nil }
    }
}

public enum DecisionOption: Codable, Hashable, Sendable {
    /// A message, its text in each language the study wrote it in.
    case message(LocalizedText)
    /// A questionnaire to answer, open for some minutes.
    case prompt(instrumentKey: String, openMinutes: Int)
}

/// An answer as decision points see it: when it was given, and its items, scores and bands.
public struct RecentAnswer: Sendable, Equatable {
    public var completedAt: Date
    public var facts: ResponseFacts

    public init(completedAt: Date, facts: ResponseFacts) {
        self.completedAt = completedAt
        self.facts = facts
    }
}

/// One decision point of one participant, as it is logged and exported.
public struct DecisionPoint: Codable, Sendable, Equatable {
    public var participant: UUID
    /// The point's day and time, e.g. `2026-03-02#10:00`.
    public var key: String
    public var at: Date
    public var available: Bool
    /// The chance of treatment the point had; nil when the participant was not available.
    public var probability: Double?
    /// Whether the point was randomised to treatment; nil when the participant was not available.
    public var assigned: Bool?
    /// The option of the pool it delivers, when assigned.
    public var option: Int?
    public var outcomeEnds: Date

    public init(
        participant: UUID, key: String, at: Date, available: Bool, probability: Double? = nil, assigned: Bool? = nil,
        option: Int? = nil, outcomeEnds: Date
    ) {
        self.participant = participant
        self.key = key
        self.at = at
        self.available = available
        self.probability = probability
        self.assigned = assigned
        self.option = option
        self.outcomeEnds = outcomeEnds
    }
}

extension DecisionPointPlan {
    /// The points of one local day, in order: their key and instant.
    public func points(on day: LocalDate, in zone: TimeZone) -> [(key: String, at: Date)] {
        times.sorted().map { time in ("\(day)#\(time)", LocalDateTime(date: day, time: time).instant(in: zone)) }
    }

    /// The decision at one point: availability, then a draw from a generator of the point's own (the seed, the
    /// participant and the point), so the same study replays exactly.
    public func decide(
        _ point: (key: String, at: Date), participant: UUID, seed: UInt64, zone: TimeZone,
        quietHours: NotificationPreferences.QuietHours?, answers: [RecentAnswer]
    ) -> DecisionPoint {
        var decision = DecisionPoint(
            participant: participant, key: point.key, at: point.at, available: true,
            outcomeEnds: point.at.addingTimeInterval(Double(outcomeMinutes) * 60))
        let local = LocalDateTime(point.at, in: zone)
        if availability.outsideQuietHours, let quietHours, quietHours.contains(local.time) {
            decision.available = false
        }
        if let recent = availability.recent, !recent.holds(at: point.at, answers: answers) {
            decision.available = false
        }
        guard decision.available else { return decision }
        let chance =
            switch probability {
            case .constant(let chance): chance
            case .byRecent(let condition, let then, let otherwise):
                condition.holds(at: point.at, answers: answers) ? then : otherwise
            }
        var generator = SeededRandom(seed: seed, for: "\(participant.uuidString.lowercased()) \(point.key)")
        decision.probability = chance
        decision.assigned = generator.chance(chance)
        if decision.assigned == true { decision.option = generator.index(options.count) }
        return decision
    }
}

extension DecisionPoint {
    /// The values of `score` in the answers of `instrumentKey` given in the point's outcome window.
    public func outcomes(_ answers: [RecentAnswer], instrumentKey: String, score: String) -> [Double] {
        answers.filter {
            $0.facts.instrumentKey == instrumentKey && $0.completedAt > at && $0.completedAt <= outcomeEnds
        }
        .sorted { $0.completedAt < $1.completedAt }
        .compactMap { $0.facts.scores[score] }
    }
}
