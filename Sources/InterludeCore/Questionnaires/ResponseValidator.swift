import Foundation

extension InstrumentDefinition {
    /// Checks answers against this exact version: unknown items, answers to hidden items, wrong types, values out
    /// of range, texts too long, and required visible questions left open. Each problem names `answers.<item id>`.
    public func problems(in answers: Answers) -> [FieldError] {
        problems(in: answers, visible: InstrumentLogic(self).visibility(answers))
    }

    private func problems(in answers: Answers, visible: Visibility) -> [FieldError] {
        var validator = FieldValidator()
        let logic = InstrumentLogic(self)
        for (itemID, value) in answers.sorted(by: { $0.key < $1.key }) {
            let field = "answers.\(itemID)"
            guard let item = item(itemID) else {
                validator.add(field, .unknown)
                continue
            }
            guard item.type.takesAnswer else {
                validator.add(field, .notAllowed)
                continue
            }
            guard visible.items.contains(itemID) else {
                validator.add(field, .notVisible)
                continue
            }
            if let code = problem(with: value, for: item) {
                validator.add(field, code.0, limit: code.1)
            }
        }
        for itemID in logic.missingRequired(answers, visible: visible)
        where !validator.errors.contains(where: { $0.field == "answers.\(itemID)" }) {
            validator.add("answers.\(itemID)", .required)
        }
        return validator.errors
    }

    /// Whether the answers are complete and valid, ready to submit.
    public func validate(_ answers: Answers) throws(ValidationFailure) {
        let found = problems(in: answers)
        if !found.isEmpty { throw ValidationFailure(found) }
    }

    /// The scores of answers that are complete and valid, as `validate` and `scores(for:)` give them, with what the
    /// person saw worked out once for both.
    public func validatedScores(for answers: Answers) throws(ValidationFailure) -> [ScoreResult] {
        let visible = InstrumentLogic(self).visibility(answers)
        let found = problems(in: answers, visible: visible)
        if !found.isEmpty { throw ValidationFailure(found) }
        return scores(for: answers, visible: visible)
    }

    private func problem(with value: AnswerValue, for item: Item) -> (FieldError.Code, Int?)? {
        switch (item.type, value) {
        case (.single, .text(let code)):
            if options(of: item).contains(where: { $0.code == code }) { return nil }
            return item.allowsOther ? Self.otherProblem(code) : (.notAnOption, nil)
        case (.multiple, .list(let codes)):
            let offered = options(of: item)
            guard Set(codes).count == codes.count else { return (.duplicate, nil) }
            let others = codes.filter { code in !offered.contains(where: { $0.code == code }) }
            if let other = others.first {
                guard item.allowsOther, others.count == 1 else { return (.notAnOption, nil) }
                if let problem = Self.otherProblem(other) { return problem }
            }
            let exclusive = offered.filter(\.exclusive).map(\.code)
            if codes.count > 1, codes.contains(where: exclusive.contains) { return (.exclusive, nil) }
            return nil
        case (.boolean, .bool):
            return nil
        case (.scale, .number(let number)):
            guard number == number.rounded() else { return (.wrongType, nil) }
            return inRange(number, item) ? nil : (.outOfRange, nil)
        case (.slider, .number(let number)):
            guard inRange(number, item) else { return (.outOfRange, nil) }
            if let step = item.step, let min = item.min {
                let steps = (number - min) / step
                if abs(steps - steps.rounded()) > 1e-6 { return (.outOfRange, nil) }
            }
            return nil
        case (.number, .number(let number)):
            guard inRange(number, item) else { return (.outOfRange, nil) }
            let scale = pow(10, Double(item.decimals ?? 6))
            let scaled = number * scale
            return abs(scaled - scaled.rounded()) < 1e-6 ? nil : (.invalidFormat, nil)
        case (.text, .text(let text)):
            let limit = item.maxLength ?? Item.defaultTextLimit
            if text.hasControlCharacters(allowing: item.multiline ? .multiple : .single) {
                return (.controlCharacter, nil)
            }
            if let format = item.format, !format.accepts(text) { return (.invalidFormat, nil) }
            if let pattern = item.pattern, text.count <= limit, !TextPattern.matches(pattern, text) {
                return (.invalidFormat, nil)
            }
            return text.count > limit ? (.tooLong, limit) : nil
        case (.date, .text(let text)):
            guard LocalDate(text) != nil else { return (.invalidFormat, nil) }
            return Self.within(text, item) ? nil : (.outOfRange, nil)
        case (.time, .text(let text)):
            return Self.isTime(text) ? nil : (.invalidFormat, nil)
        case (.dateTime, .text(let text)):
            guard Self.isDateTime(text) else { return (.invalidFormat, nil) }
            return Self.within(text, item) ? nil : (.outOfRange, nil)
        default:
            return (.wrongType, nil)
        }
    }

    /// An answer in one's own words to a choice: one line, not too long.
    private static func otherProblem(_ text: String) -> (FieldError.Code, Int?)? {
        if text.trimmingCharacters(in: .whitespaces).isEmpty { return (.required, nil) }
        if text.hasControlCharacters(allowing: .single) { return (.controlCharacter, nil) }
        return text.count > Item.otherAnswerLimit ? (.tooLong, Item.otherAnswerLimit) : nil
    }

    private func inRange(_ number: Double, _ item: Item) -> Bool {
        guard NumberLimits.accepts(number) else { return false }
        if let min = item.min, number < min - 1e-9 { return false }
        if let max = item.max, number > max + 1e-9 { return false }
        return true
    }

    /// Whether a date or date-time lies within the item's earliest and latest (compared by their dates and times
    /// as written; a bound given as a date holds for the whole day).
    static func within(_ text: String, _ item: Item) -> Bool {
        if let earliest = item.earliest, text.prefix(earliest.count) < earliest { return false }
        if let latest = item.latest, text.prefix(latest.count) > latest { return false }
        return true
    }

    /// `HH:MM` or `HH:MM:SS`, 24-hour.
    static func isTime(_ text: String) -> Bool {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard (2...3).contains(parts.count), parts.allSatisfy({ $0.count == 2 && $0.allSatisfy(\.isNumber) }),
            let hour = Int(parts[0]), let minute = Int(parts[1])
        else { return false }
        let second = parts.count == 3 ? Int(parts[2]) ?? 99 : 0
        return hour < 24 && minute < 60 && second < 60
    }

    /// ISO 8601 with a zone offset, e.g. `2026-03-02T09:30:00+01:00`.
    static func isDateTime(_ text: String) -> Bool {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        if formatter.date(from: text) != nil { return true }
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.date(from: text) != nil
    }
}
