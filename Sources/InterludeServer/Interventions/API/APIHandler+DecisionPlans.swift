import Foundation
import InterludeCore

extension APIHandler {
    func getDecisionPlan(_ input: Operations.GetDecisionPlan.Input) async throws -> Operations.GetDecisionPlan.Output {
        let context = try APIContext.current()
        let staff = try await context.user(.therapist, .researcher, .admin)
        let grant = try await context.access.require(.viewPlans, in: try pathID(input.path.studyId), by: staff)
        guard let plan = try await context.decisionPoints.plan(in: grant) else { throw AppError.notFound }
        return .ok(.init(body: .json(.init(plan))))
    }

    func setDecisionPlan(_ input: Operations.SetDecisionPlan.Input) async throws -> Operations.SetDecisionPlan.Output {
        let context = try APIContext.current()
        guard case .json(let body) = input.body else { throw AppError.malformedRequest }
        let staff = try await context.user(.therapist, .researcher, .admin)
        let grant = try await context.access.require(.editPlans, in: try pathID(input.path.studyId), by: staff)
        let plan = try DecisionPointPlan(body)
        try await context.decisionPoints.setPlan(plan, in: grant)
        return .ok(.init(body: .json(.init(plan))))
    }

    func removeDecisionPlan(_ input: Operations.RemoveDecisionPlan.Input) async throws
        -> Operations.RemoveDecisionPlan.Output
    {
        let context = try APIContext.current()
        let staff = try await context.user(.therapist, .researcher, .admin)
        let grant = try await context.access.require(.editPlans, in: try pathID(input.path.studyId), by: staff)
        try await context.decisionPoints.removePlan(in: grant)
        return .noContent
    }
}

extension APIContext {
    var decisionPoints: DecisionPointService { DecisionPointService(database: database, services: services) }
}

extension DecisionPointPlan {
    /// Reads a plan as the API receives it, every problem named by its field (`times.2`, `options.0.texts.de`).
    init(_ body: Components.Schemas.DecisionPlan) throws {
        var validator = FieldValidator()
        var times: [LocalTime] = []
        for (index, text) in body.times.enumerated() {
            if let time = LocalTime(text) {
                times.append(time)
            } else {
                validator.add("times.\(index)", .invalidFormat)
            }
        }
        func condition(_ given: Components.Schemas.DecisionCondition, field: String) -> RecentCondition? {
            let key = validator.text(given.instrumentKey, field: "\(field).instrumentKey", maxLength: 100)
            let clauses = given.clauses.enumerated().compactMap { index, clause in
                Self.clause(clause, field: "\(field).clauses.\(index)", into: &validator)
            }
            guard let key, clauses.count == given.clauses.count else { return nil }
            return RecentCondition(
                instrumentKey: key, withinHours: given.withinHours,
                condition: RuleCondition(mode: given.mode == .any ? .any : .all, clauses: clauses))
        }
        let available = body.availableWhen.flatMap { condition($0, field: "availableWhen") }
        var probability = DecisionProbability.constant(body.probability)
        if let when = body.probabilityWhen, let holds = condition(when.condition, field: "probabilityWhen.condition") {
            probability = .byRecent(holds, then: when.then, otherwise: body.probability)
        }
        var options: [DecisionOption] = []
        for (index, option) in body.options.enumerated() {
            let field = "options.\(index)"
            switch option.kind {
            case .message:
                do {
                    options.append(
                        .message(try MessagePlan.validateMessage([.en: option.texts?.en, .de: option.texts?.de])))
                } catch {
                    // The pool's check names `text` for a message in no language; here the field is `texts`.
                    for problem in error.errors {
                        let name = problem.field == "text" ? "texts" : problem.field
                        validator.add("\(field).\(name)", problem.code, limit: problem.limit)
                    }
                }
            case .prompt:
                let key = validator.text(option.instrumentKey, field: "\(field).instrumentKey", maxLength: 100)
                guard let minutes = option.openMinutes else {
                    validator.add("\(field).openMinutes", .required)
                    continue
                }
                if let key { options.append(.prompt(instrumentKey: key, openMinutes: minutes)) }
            }
        }
        var outcome: DecisionOutcome?
        if let given = body.outcome {
            let key = validator.text(given.instrumentKey, field: "outcome.instrumentKey", maxLength: 100)
            let score = validator.text(given.score, field: "outcome.score", maxLength: 100)
            if let key, let score { outcome = DecisionOutcome(instrumentKey: key, score: score) }
        }
        try validator.check()
        self.init(
            times: times,
            availability: DecisionAvailability(
                outsideQuietHours: body.outsideQuietHours ?? true,
                recent: available),
            probability: probability, options: options, outcomeMinutes: body.outcomeMinutes, outcome: outcome)
    }

    private static func clause(
        _ given: Components.Schemas.RuleClause, field: String, into validator: inout FieldValidator
    ) -> RuleClause? {
        let id = validator.text(given.id, field: "\(field).id", maxLength: 100)
        let level = given.level.flatMap { validator.text($0, field: "\(field).level", maxLength: 100) }
        guard let id, let subject = RuleClause.Subject(rawValue: given.subject.rawValue),
            let comparison = RuleClause.Operator(rawValue: given._operator.rawValue)
        else { return nil }
        if subject == .band {
            guard let level else {
                validator.add("\(field).level", .required)
                return nil
            }
            return RuleClause(subject: subject, id: id, operator: comparison, level: level)
        }
        guard let value = given.value else {
            validator.add("\(field).value", .required)
            return nil
        }
        return RuleClause(subject: subject, id: id, operator: comparison, value: value)
    }
}

extension Components.Schemas.DecisionPlan {
    init(_ plan: DecisionPointPlan) {
        func condition(_ recent: RecentCondition) -> Components.Schemas.DecisionCondition {
            .init(
                instrumentKey: recent.instrumentKey, withinHours: recent.withinHours,
                mode: recent.condition.mode == .any ? .any : .all,
                clauses: recent.condition.clauses.map { clause in
                    .init(
                        subject: .init(rawValue: clause.subject.rawValue) ?? .score, id: clause.id,
                        _operator: .init(rawValue: clause.operator.rawValue) ?? .equals, value: clause.value,
                        level: clause.level)
                })
        }
        var probability: Double
        var when: ProbabilityWhenPayload?
        switch plan.probability {
        case .constant(let chance):
            probability = chance
        case .byRecent(let recent, let then, let otherwise):
            probability = otherwise
            when = .init(condition: condition(recent), then: then)
        }
        self.init(
            times: plan.times.map(\.description), outsideQuietHours: plan.availability.outsideQuietHours,
            availableWhen: plan.availability.recent.map(condition), probability: probability, probabilityWhen: when,
            options: plan.options.map { option in
                switch option {
                case .message(let texts):
                    .init(kind: .message, texts: .init(en: texts.values[.en], de: texts.values[.de]))
                case .prompt(let key, let minutes):
                    .init(kind: .prompt, instrumentKey: key, openMinutes: minutes)
                }
            },
            outcomeMinutes: plan.outcomeMinutes,
            outcome: plan.outcome.map { .init(instrumentKey: $0.instrumentKey, score: $0.score) })
    }
}
