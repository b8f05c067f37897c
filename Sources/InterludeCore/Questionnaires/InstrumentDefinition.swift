import Foundation

/// A questionnaire as Interlude runs it: sections of items, visibility conditions, scoring rules and
/// interpretation bands, in one or more languages. A published version never changes; editing makes a new one.
public struct InstrumentDefinition: Codable, Hashable, Sendable {
    /// Stable name across versions, lower-case letters, digits and dashes, e.g. `phq-9`.
    public var key: String
    public var version: Int
    public var title: LocalizedText
    public var description: LocalizedText?
    /// Where the instrument comes from and who made it.
    public var source: String?
    /// Under which terms it may be used; says so when only structure and scoring are shipped.
    public var licence: String?
    /// Whether patients see their own scores next to their answers.
    public var patientFeedback: Bool
    public var sections: [Section] {
        didSet { places = ItemPlaces(sections) }
    }
    public var scores: [ScoreRule]
    /// What the app captures with the answers, where the person allows it for the study; empty for most.
    public var context: [ContextKind]
    /// Shown to the person once their answers are sent, e.g. a thank-you or what happens next.
    public var outro: LocalizedText?
    /// Where each item stands, kept with `sections`.
    private var places: ItemPlaces

    public init(
        key: String, version: Int, title: LocalizedText, description: LocalizedText? = nil, source: String? = nil,
        licence: String? = nil, patientFeedback: Bool = false, sections: [Section], scores: [ScoreRule] = [],
        context: [ContextKind] = [], outro: LocalizedText? = nil
    ) {
        self.key = key
        self.version = version
        self.title = title
        self.description = description
        self.source = source
        self.licence = licence
        self.patientFeedback = patientFeedback
        self.sections = sections
        self.places = ItemPlaces(sections)
        self.scores = scores
        self.context = context
        self.outro = outro
    }

    enum CodingKeys: String, CodingKey {
        case key, version, title, description, source, licence, patientFeedback, sections, scores, context, outro
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        key = try container.decode(String.self, forKey: .key)
        version = try container.decodeIfPresent(Int.self, forKey: .version) ?? 1
        title = try container.decode(LocalizedText.self, forKey: .title)
        description = try container.decodeIfPresent(LocalizedText.self, forKey: .description)
        source = try container.decodeIfPresent(String.self, forKey: .source)
        licence = try container.decodeIfPresent(String.self, forKey: .licence)
        patientFeedback = try container.decodeIfPresent(Bool.self, forKey: .patientFeedback) ?? false
        sections = try container.decode([Section].self, forKey: .sections)
        places = ItemPlaces(sections)
        scores = try container.decodeIfPresent([ScoreRule].self, forKey: .scores) ?? []
        context = try container.decodeIfPresent([ContextKind].self, forKey: .context) ?? []
        outro = try container.decodeIfPresent(LocalizedText.self, forKey: .outro)
    }

    /// An instrument that asks for no context and has no outro is written as before either existed.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(key, forKey: .key)
        try container.encode(version, forKey: .version)
        try container.encode(title, forKey: .title)
        try container.encodeIfPresent(description, forKey: .description)
        try container.encodeIfPresent(source, forKey: .source)
        try container.encodeIfPresent(licence, forKey: .licence)
        try container.encode(patientFeedback, forKey: .patientFeedback)
        try container.encode(sections, forKey: .sections)
        try container.encode(scores, forKey: .scores)
        if !context.isEmpty { try container.encode(context, forKey: .context) }
        try container.encodeIfPresent(outro, forKey: .outro)
    }

    /// Every item in the order a person meets them.
    public var items: [Item] { sections.flatMap(\.items) }

    /// Looked up where it stands: validation, visibility and scoring ask for every item, and gathering all of them
    /// for each question copied every item each time.
    public func item(_ id: String) -> Item? {
        places.of(id).map { sections[$0.section].items[$0.item] }
    }

    public func section(containing itemID: String) -> Section? {
        places.of(itemID).map { sections[$0.section] }
    }

    /// The options an item offers: its own, else its section's shared scale.
    public func options(of item: Item) -> [AnswerOption] {
        if let own = item.options, !own.isEmpty { return own }
        return places.of(item.id).flatMap { sections[$0.section].options } ?? []
    }
}

/// The section and place of each item id (the first, should one repeat), worked out when the sections are set:
/// validation and scoring look items up for every answer of every submission. Follows from the sections alone, so
/// it has no part in comparing or hashing a definition.
private struct ItemPlaces: Hashable, Sendable {
    private var places: [String: (section: Int, item: Int)] = [:]

    init(_ sections: [Section]) {
        for (sectionIndex, section) in sections.enumerated() {
            for (itemIndex, item) in section.items.enumerated() where places[item.id] == nil {
                places[item.id] = (sectionIndex, itemIndex)
            }
        }
    }

    func of(_ id: String) -> (section: Int, item: Int)? {
        places[id]
    }

    static func == (lhs: ItemPlaces, rhs: ItemPlaces) -> Bool { true }

    func hash(into hasher: inout Hasher) {}
}

/// A group of items shown together; with `options` its single-choice items share one answer scale (a matrix).
public struct Section: Codable, Hashable, Sendable {
    public var id: String
    /// The group's linkId in the FHIR file it was imported from, where it is not a valid id (`/29463-7`).
    public var linkId: String?
    public var title: LocalizedText?
    public var description: LocalizedText?
    public var options: [AnswerOption]?
    public var visibleWhen: Condition?
    public var items: [Item]

    public init(
        id: String, title: LocalizedText? = nil, description: LocalizedText? = nil, options: [AnswerOption]? = nil,
        visibleWhen: Condition? = nil, items: [Item], linkId: String? = nil
    ) {
        self.id = id
        self.linkId = linkId
        self.title = title
        self.description = description
        self.options = options
        self.visibleWhen = visibleWhen
        self.items = items
    }
}

/// One answer choice: a stable code, a label, and the value it contributes to scores.
public struct AnswerOption: Codable, Hashable, Sendable {
    public var code: String
    public var label: LocalizedText
    public var score: Double?
    /// Chosen, this option must stand alone (e.g. "nothing" in a multiple choice).
    public var exclusive: Bool

    public init(code: String, label: LocalizedText, score: Double? = nil, exclusive: Bool = false) {
        self.code = code
        self.label = label
        self.score = score
        self.exclusive = exclusive
    }

    enum CodingKeys: String, CodingKey { case code, label, score, exclusive }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        if let text = try? container.decode(String.self, forKey: .code) {
            code = text
        } else {
            code = String(try container.decode(Int.self, forKey: .code))
        }
        label = try container.decode(LocalizedText.self, forKey: .label)
        score = try container.decodeIfPresent(Double.self, forKey: .score)
        exclusive = try container.decodeIfPresent(Bool.self, forKey: .exclusive) ?? false
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(code, forKey: .code)
        try container.encode(label, forKey: .label)
        try container.encodeIfPresent(score, forKey: .score)
        if exclusive { try container.encode(true, forKey: .exclusive) }
    }

    /// The value this option adds to a score: its `score`, else its code read as a number.
    public var numericValue: Double? { score ?? Double(code) }
}

/// What kind of answer an item asks for.
public enum ItemType: String, Codable, Hashable, Sendable, CaseIterable {
    case single
    case multiple
    case boolean
    /// A labelled integer scale, such as 0–4 or the SAM 1–9.
    case scale
    /// A visual analogue scale; never has a default value.
    case slider
    case number
    case text
    case date
    case time
    case dateTime
    /// Text shown between questions; takes no answer.
    case display

    public var takesAnswer: Bool { self != .display }
}

/// One question (or a display text).
public struct Item: Codable, Hashable, Sendable {
    public var id: String
    /// The linkId in the FHIR file it was imported from, where it is not a valid id (`/29463-7`): written back to
    /// FHIR as it was.
    public var linkId: String?
    public var type: ItemType
    public var text: LocalizedText
    public var help: LocalizedText?
    public var required: Bool
    public var options: [AnswerOption]?
    public var min: Double?
    public var max: Double?
    public var step: Double?
    /// Labels at the ends of a slider or scale, e.g. "not at all" … "extremely".
    public var minLabel: LocalizedText?
    public var maxLabel: LocalizedText?
    public var decimals: Int?
    public var unit: String?
    public var maxLength: Int?
    public var multiline: Bool
    /// The earliest and latest answer a date or date-time item accepts, as ISO text (`2026-01-31`).
    public var earliest: String?
    public var latest: String?
    /// The shape a text answer must have, where it is more than free text.
    public var format: TextFormat?
    /// A regular expression a text answer must match whole, as FHIR's `regex` extension gives it.
    public var pattern: String?
    /// A choice that also takes an answer in the person's own words (FHIR's open-choice): a text in place of a
    /// single choice's code, or one text among a multiple choice's codes.
    public var allowsOther: Bool
    public var visibleWhen: Condition?

    public init(
        id: String, type: ItemType, text: LocalizedText, help: LocalizedText? = nil, required: Bool = false,
        options: [AnswerOption]? = nil, min: Double? = nil, max: Double? = nil, step: Double? = nil,
        minLabel: LocalizedText? = nil, maxLabel: LocalizedText? = nil, decimals: Int? = nil, unit: String? = nil,
        maxLength: Int? = nil, multiline: Bool = false, earliest: String? = nil, latest: String? = nil,
        format: TextFormat? = nil, pattern: String? = nil, allowsOther: Bool = false, visibleWhen: Condition? = nil,
        linkId: String? = nil
    ) {
        self.id = id
        self.linkId = linkId
        self.type = type
        self.text = text
        self.help = help
        self.required = required
        self.options = options
        self.min = min
        self.max = max
        self.step = step
        self.minLabel = minLabel
        self.maxLabel = maxLabel
        self.decimals = decimals
        self.unit = unit
        self.maxLength = maxLength
        self.multiline = multiline
        self.earliest = earliest
        self.latest = latest
        self.format = format
        self.pattern = pattern
        self.allowsOther = allowsOther
        self.visibleWhen = visibleWhen
    }

    enum CodingKeys: String, CodingKey {
        case id, type, text, help, required, options, min, max, step, minLabel, maxLabel, decimals, unit, maxLength
        case multiline, earliest, latest, format, pattern, allowsOther, visibleWhen, linkId
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        type = try container.decode(ItemType.self, forKey: .type)
        text = try container.decode(LocalizedText.self, forKey: .text)
        help = try container.decodeIfPresent(LocalizedText.self, forKey: .help)
        required = try container.decodeIfPresent(Bool.self, forKey: .required) ?? false
        options = try container.decodeIfPresent([AnswerOption].self, forKey: .options)
        min = try container.decodeIfPresent(Double.self, forKey: .min)
        max = try container.decodeIfPresent(Double.self, forKey: .max)
        step = try container.decodeIfPresent(Double.self, forKey: .step)
        minLabel = try container.decodeIfPresent(LocalizedText.self, forKey: .minLabel)
        maxLabel = try container.decodeIfPresent(LocalizedText.self, forKey: .maxLabel)
        decimals = try container.decodeIfPresent(Int.self, forKey: .decimals)
        unit = try container.decodeIfPresent(String.self, forKey: .unit)
        maxLength = try container.decodeIfPresent(Int.self, forKey: .maxLength)
        multiline = try container.decodeIfPresent(Bool.self, forKey: .multiline) ?? false
        earliest = try container.decodeIfPresent(String.self, forKey: .earliest)
        latest = try container.decodeIfPresent(String.self, forKey: .latest)
        format = try container.decodeIfPresent(TextFormat.self, forKey: .format)
        pattern = try container.decodeIfPresent(String.self, forKey: .pattern)
        allowsOther = try container.decodeIfPresent(Bool.self, forKey: .allowsOther) ?? false
        linkId = try container.decodeIfPresent(String.self, forKey: .linkId)
        visibleWhen = try container.decodeIfPresent(Condition.self, forKey: .visibleWhen)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(type, forKey: .type)
        try container.encode(text, forKey: .text)
        try container.encodeIfPresent(help, forKey: .help)
        if required { try container.encode(true, forKey: .required) }
        try container.encodeIfPresent(options, forKey: .options)
        try container.encodeIfPresent(min, forKey: .min)
        try container.encodeIfPresent(max, forKey: .max)
        try container.encodeIfPresent(step, forKey: .step)
        try container.encodeIfPresent(minLabel, forKey: .minLabel)
        try container.encodeIfPresent(maxLabel, forKey: .maxLabel)
        try container.encodeIfPresent(decimals, forKey: .decimals)
        try container.encodeIfPresent(unit, forKey: .unit)
        try container.encodeIfPresent(maxLength, forKey: .maxLength)
        if multiline { try container.encode(true, forKey: .multiline) }
        try container.encodeIfPresent(earliest, forKey: .earliest)
        try container.encodeIfPresent(latest, forKey: .latest)
        try container.encodeIfPresent(format, forKey: .format)
        try container.encodeIfPresent(pattern, forKey: .pattern)
        if allowsOther { try container.encode(true, forKey: .allowsOther) }
        try container.encodeIfPresent(visibleWhen, forKey: .visibleWhen)
        try container.encodeIfPresent(linkId, forKey: .linkId)
    }

    /// The longest text answer accepted when the definition sets none.
    public static let defaultTextLimit = 2000
    /// The longest answer in one's own words to a choice.
    public static let otherAnswerLimit = 200
}

/// Shapes of text answers Interlude checks, for values a questionnaire asks for as text.
public enum TextFormat: String, Codable, Hashable, Sendable, CaseIterable {
    /// A duration in minutes and seconds, `m:ss` or `mm:ss` (up to 999 minutes), as REDCap's `time_mm_ss`.
    case minutesSeconds

    /// The shape as the regular expression of FHIR's `regex` extension.
    public var fhirRegex: String {
        switch self {
        case .minutesSeconds: "^[0-9]{1,3}:[0-5][0-9]$"
        }
    }

    /// Whether `text` has this shape.
    public func accepts(_ text: String) -> Bool {
        switch self {
        case .minutesSeconds:
            let parts = text.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count == 2, (1...3).contains(parts[0].count), parts[1].count == 2,
                parts.allSatisfy({ $0.allSatisfy { $0.isASCII && $0.isNumber } }), let seconds = Int(parts[1])
            else { return false }
            return seconds < 60
        }
    }
}

/// When an item or section is shown: its clauses and nested groups combined with `all` (every one true) or `any`
/// (at least one). Groups say what parentheses say in branching logic: `[a] = 1 and ([b] = 1 or [c] = 1)`.
public struct Condition: Codable, Hashable, Sendable {
    public enum Mode: String, Codable, Hashable, Sendable {
        case all
        case any
    }

    public var mode: Mode
    public var clauses: [Clause]
    public var groups: [Condition]

    /// The deepest nesting of groups accepted, deeper than any branching logic people write.
    public static let maxDepth = 8

    public init(_ mode: Mode = .all, _ clauses: [Clause], groups: [Condition] = []) {
        self.mode = mode
        self.clauses = clauses
        self.groups = groups
    }

    enum CodingKeys: String, CodingKey { case mode, clauses, groups }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        mode = try container.decodeIfPresent(Mode.self, forKey: .mode) ?? .all
        clauses = try container.decodeIfPresent([Clause].self, forKey: .clauses) ?? []
        groups = try container.decodeIfPresent([Condition].self, forKey: .groups) ?? []
    }

    /// A condition without groups is written as before groups existed.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(mode, forKey: .mode)
        try container.encode(clauses, forKey: .clauses)
        if !groups.isEmpty { try container.encode(groups, forKey: .groups) }
    }

    /// Every clause, also those of nested groups.
    public var allClauses: [Clause] { clauses + groups.flatMap(\.allClauses) }

    /// How deep the groups nest: 0 without groups.
    public var depth: Int { groups.map { $0.depth + 1 }.max() ?? 0 }
}

/// One comparison of another item's answer.
public struct Clause: Codable, Hashable, Sendable {
    public enum Operator: String, Codable, Hashable, Sendable, CaseIterable {
        case equals
        case notEquals
        case greater
        case less
        /// At least (`>=`) and at most (`<=`) the value.
        case atLeast
        case atMost
        /// `value` true: the item has an answer; false: it has none.
        case answered
    }

    public var item: String
    public var `operator`: Operator
    public var value: AnswerValue?

    public init(item: String, _ operator: Operator, _ value: AnswerValue? = nil) {
        self.item = item
        self.operator = `operator`
        self.value = value
    }
}

/// A score computed from items: their sum or mean, with reverse-coded items, a minimum of answered items
/// (prorating a sum when some are missing), a factor, and bands that say what a value means.
public struct ScoreRule: Codable, Hashable, Sendable {
    public enum Method: String, Codable, Hashable, Sendable {
        case sum
        case mean
    }

    public var id: String
    public var title: LocalizedText
    public var method: Method
    public var items: [String]
    public var reverse: [String]
    /// Fewer answered items leave the score empty; defaults to all items.
    public var minAnswered: Int?
    /// With some items missing, a sum is scaled up to all items (and rounded).
    public var prorate: Bool
    public var factor: Double
    public var decimals: Int
    public var bands: [Band]

    public init(
        id: String, title: LocalizedText, method: Method, items: [String], reverse: [String] = [],
        minAnswered: Int? = nil, prorate: Bool = false, factor: Double = 1, decimals: Int? = nil, bands: [Band] = []
    ) {
        self.id = id
        self.title = title
        self.method = method
        self.items = items
        self.reverse = reverse
        self.minAnswered = minAnswered
        self.prorate = prorate
        self.factor = factor
        self.decimals = decimals ?? (method == .sum ? 0 : 2)
        self.bands = bands
    }

    enum CodingKeys: String, CodingKey {
        case id, title, method, items, reverse, minAnswered, prorate, factor, decimals, bands
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        title = try container.decode(LocalizedText.self, forKey: .title)
        method = try container.decode(Method.self, forKey: .method)
        items = try container.decode([String].self, forKey: .items)
        reverse = try container.decodeIfPresent([String].self, forKey: .reverse) ?? []
        minAnswered = try container.decodeIfPresent(Int.self, forKey: .minAnswered)
        prorate = try container.decodeIfPresent(Bool.self, forKey: .prorate) ?? false
        factor = try container.decodeIfPresent(Double.self, forKey: .factor) ?? 1
        decimals = try container.decodeIfPresent(Int.self, forKey: .decimals) ?? (method == .sum ? 0 : 2)
        bands = try container.decodeIfPresent([Band].self, forKey: .bands) ?? []
    }
}

/// What a score between `min` and `max` (both inclusive) means.
public struct Band: Codable, Hashable, Sendable {
    public var min: Double
    public var max: Double
    public var label: LocalizedText
    /// A stable name for the band, e.g. `moderate`, for rules and exports.
    public var level: String?

    public init(min: Double, max: Double, label: LocalizedText, level: String? = nil) {
        self.min = min
        self.max = max
        self.label = label
        self.level = level
    }
}
