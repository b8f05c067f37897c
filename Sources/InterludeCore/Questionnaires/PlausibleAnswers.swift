import Foundation

/// Answers a questionnaire the way a person might: every visible question in order, a choice among the options, a
/// number within its range, a short text where one is asked for; conditions are followed as the answers grow.
public struct PlausibleAnswers: Sendable {
    public var random: SeededRandom

    public init(random: SeededRandom) {
        self.random = random
    }

    public mutating func answers(to definition: InstrumentDefinition, at now: Date) -> Answers {
        let logic = InstrumentLogic(definition)
        var answers: Answers = [:]
        // Each answer can show further questions; a definition is finite, so this ends.
        for _ in 0..<3 {
            let visible = logic.visibility(answers).items
            for item in definition.items
            where visible.contains(item.id) && item.type.takesAnswer && answers[item.id] == nil {
                if !item.required, random.chance(0.1) { continue }
                if let value = answer(item, options: definition.options(of: item), at: now) { answers[item.id] = value }
            }
        }
        let visible = logic.visibility(answers).items
        return answers.filter { visible.contains($0.key) }
    }

    private mutating func answer(_ item: Item, options: [AnswerOption], at now: Date) -> AnswerValue? {
        switch item.type {
        case .single, .scale:
            if !options.isEmpty { return .text(options[random.index(options.count)].code) }
            return number(item, integral: true)
        case .multiple:
            guard !options.isEmpty else { return nil }
            if let exclusive = options.first(where: \.exclusive), random.chance(0.2) { return .list([exclusive.code]) }
            let choices = options.filter { !$0.exclusive }
            let picked = choices.filter { _ in random.chance(0.4) }.map(\.code)
            return .list(picked.isEmpty ? [choices[random.index(choices.count)].code] : picked)
        case .boolean:
            return .bool(random.chance(0.5))
        case .slider, .number:
            return number(item, integral: item.type == .number && (item.decimals ?? 0) == 0)
        case .text:
            let words = ["calm", "tired", "busy day", "a walk outside", "work", "family", "slept well"]
            let text = words[random.index(words.count)]
            return .text(String(text.prefix(item.maxLength ?? text.count)))
        case .date:
            return .text(LocalDate(now, in: TimeZone(identifier: "UTC")!).description)
        case .time:
            return .text(String(format: "%02d:%02d", random.index(24), random.index(60)))
        case .dateTime:
            return .text(LocalDateTime(now, in: TimeZone(identifier: "UTC")!).description)
        case .display:
            return nil
        }
    }

    private mutating func number(_ item: Item, integral: Bool) -> AnswerValue {
        let low = item.min ?? 0
        let high = max(item.max ?? 100, low)
        var value = low + (high - low) * random.unit()
        if let step = item.step, step > 0 {
            value = low + (((value - low) / step).rounded() * step)
        } else if integral {
            value = value.rounded()
        } else if let decimals = item.decimals {
            let scale = pow(10, Double(decimals))
            value = (value * scale).rounded() / scale
        }
        return .number(min(max(value, low), high))
    }
}
