import Foundation

/// What a patient receives between sessions: a commendation to read, a task to mark done, a question to answer
/// (the answer stays on the patient's device), or a short message from the study's pool.
public enum InterventionKind: String, Codable, Sendable, CaseIterable {
    case commendation
    case task
    case question
    case message

    /// The kinds a therapist writes; messages come from a study's pool.
    public static let written: [InterventionKind] = [.commendation, .task, .question]
}

/// Where an intervention came from.
public enum InterventionOrigin: String, Codable, Sendable {
    case therapist
    case rule
    case messagePlan
}

/// How far the patient got with an intervention. The server knows only these moments, never an answer.
public enum InterventionState: String, Codable, Sendable {
    case sent
    case seen
    case completed

    public init(seenAt: Date?, completedAt: Date?) {
        self = completedAt != nil ? .completed : seenAt != nil ? .seen : .sent
    }
}

/// A checked intervention text as a therapist or a rule writes it.
public struct InterventionDraft: Codable, Hashable, Sendable {
    public static let textMaxLength = 2000

    public var kind: InterventionKind
    public var text: String

    public init(kind: InterventionKind, text: String) {
        self.kind = kind
        self.text = text
    }

    /// A draft as a form sends it, the kind by name.
    public static func validate(kindNamed name: String?, text: String?) throws(ValidationFailure) -> InterventionDraft {
        guard let kind = name.flatMap(InterventionKind.init(rawValue:)) else {
            throw ValidationFailure(field: "kind", code: .notAllowed)
        }
        return try validate(kind: kind, text: text)
    }

    /// Trims the text and refuses an empty or overlong one, or a kind nobody writes.
    public static func validate(kind: InterventionKind, text: String?, fieldPrefix: String = "")
        throws(ValidationFailure)
        -> InterventionDraft
    {
        var validator = FieldValidator()
        if !InterventionKind.written.contains(kind) { validator.add(fieldPrefix + "kind", .notAllowed) }
        let trimmed = validator.text(text, field: fieldPrefix + "text", maxLength: textMaxLength, lines: .multiple)
        try validator.check()
        return InterventionDraft(kind: kind, text: trimmed!)
    }
}

/// A study's ready-made intervention, in English, German or both; the one sent is in the patient's language.
public struct InterventionTemplateDraft: Hashable, Sendable {
    public var kind: InterventionKind
    public var texts: LocalizedText

    public init(kind: InterventionKind, texts: LocalizedText) {
        self.kind = kind
        self.texts = texts
    }

    /// The kind by name and the text per language, checked as `InterventionDraft` checks one text; a problem in the
    /// German one names `texts.de`.
    public static func validate(kindNamed name: String?, texts: [Language: String?]) throws(ValidationFailure)
        -> InterventionTemplateDraft
    {
        var validator = FieldValidator()
        let kind = name.flatMap(InterventionKind.init(rawValue:))
        if kind.map(InterventionKind.written.contains) != true { validator.add("kind", .notAllowed) }
        let checked = validator.texts(
            texts, field: "text", perLanguage: "texts", maxLength: InterventionDraft.textMaxLength, lines: .multiple)
        try validator.check()
        return InterventionTemplateDraft(kind: kind!, texts: checked!)
    }
}

/// How many of a study's pool of short reinforcement messages a patient receives a day, at random moments
/// inside a daily window of local time.
public struct MessagePlan: Codable, Hashable, Sendable {
    public static let mostPerDay = 12
    public static let messageMaxLength = 280

    /// A message for the pool in English, German or both; a problem in the German one names `texts.de`.
    public static func validateMessage(_ texts: [Language: String?]) throws(ValidationFailure) -> LocalizedText {
        var validator = FieldValidator()
        let checked = validator.texts(
            texts, field: "text", perLanguage: "texts", maxLength: messageMaxLength, lines: .multiple)
        try validator.check()
        return checked!
    }

    public var perDay: Int
    public var windowStart: LocalTime
    /// The last minute a message may arrive at.
    public var windowEnd: LocalTime
    /// Whether each participant may choose fewer messages and a narrower window inside this plan's.
    public var personChooses: Bool

    public init(perDay: Int, windowStart: LocalTime, windowEnd: LocalTime, personChooses: Bool = false) {
        self.perDay = perDay
        self.windowStart = windowStart
        self.windowEnd = windowEnd
        self.personChooses = personChooses
    }

    private enum CodingKeys: String, CodingKey {
        case perDay, windowStart, windowEnd, personChooses
    }

    /// Plans stored before participants could choose read as plans they cannot change.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        perDay = try container.decode(Int.self, forKey: .perDay)
        windowStart = try container.decode(LocalTime.self, forKey: .windowStart)
        windowEnd = try container.decode(LocalTime.self, forKey: .windowEnd)
        personChooses = try container.decodeIfPresent(Bool.self, forKey: .personChooses) ?? false
    }

    /// A participant's own plan inside this one: no messages at all (0), or up to this plan's number a day inside
    /// its window, with room for each in the window. Refused, naming the field, when the study does not let them
    /// choose or the choice lies outside its bounds.
    public func chosen(perDay count: Int, windowStart start: LocalTime, windowEnd end: LocalTime)
        throws(ValidationFailure) -> MessagePlan
    {
        guard personChooses else { throw ValidationFailure(field: "perDay", code: .notAllowed) }
        var validator = FieldValidator()
        if count < 0 || count > perDay { validator.add("perDay", .outOfRange, limit: perDay) }
        if start < windowStart || start > windowEnd { validator.add("windowStart", .outsideWindow) }
        if end > windowEnd || end < windowStart { validator.add("windowEnd", .outsideWindow) }
        if validator.errors.isEmpty {
            if end <= start {
                validator.add("windowEnd", .invalidValue)
            } else if end.minutes - start.minutes + 1 < count {
                validator.add("windowEnd", .tooShort)
            }
        }
        try validator.check()
        return MessagePlan(perDay: count, windowStart: start, windowEnd: end)
    }

    /// A plan as a form sends it (`"3"`, `"09:00"`, `"20:00"`), checked.
    public static func parse(perDay: String, windowStart: String, windowEnd: String, personChooses: Bool = false)
        throws(ValidationFailure)
        -> MessagePlan
    {
        var validator = FieldValidator()
        let count = Int(perDay.trimmingCharacters(in: .whitespaces))
        let start = LocalTime(windowStart)
        let end = LocalTime(windowEnd)
        if count == nil { validator.add("perDay", .invalidFormat) }
        if start == nil { validator.add("windowStart", .invalidFormat) }
        if end == nil { validator.add("windowEnd", .invalidFormat) }
        try validator.check()
        let plan = MessagePlan(perDay: count!, windowStart: start!, windowEnd: end!, personChooses: personChooses)
        try plan.validate()
        return plan
    }

    public func validate() throws(ValidationFailure) {
        var validator = FieldValidator()
        if perDay < 1 || perDay > Self.mostPerDay { validator.add("perDay", .outOfRange, limit: Self.mostPerDay) }
        if windowEnd <= windowStart {
            validator.add("windowEnd", .invalidValue)
        } else if windowEnd.minutes - windowStart.minutes + 1 < perDay {
            validator.add("windowEnd", .tooShort)
        }
        try validator.check()
    }

    /// The moments of one day's messages: distinct minutes inside the window, the same for the same seed.
    public func moments(on date: LocalDate, seed: String) -> [LocalTime] {
        var generator = SeededGenerator(seed: "\(seed)|\(date)")
        let span = max(windowEnd.minutes - windowStart.minutes + 1, 1)
        var chosen = Set<Int>()
        while chosen.count < min(perDay, span) {
            chosen.insert(windowStart.minutes + Int.random(in: 0..<span, using: &generator))
        }
        return chosen.sorted().compactMap { LocalTime(minutes: $0) }
    }

    /// Which of a pool of `count` messages a moment carries, the same for the same seed.
    public static func pick(from count: Int, seed: String) -> Int {
        guard count > 1 else { return 0 }
        var generator = SeededGenerator(seed: seed)
        return Int.random(in: 0..<count, using: &generator)
    }
}
