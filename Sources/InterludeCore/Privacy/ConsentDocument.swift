import Foundation

/// A part of a study's consent the person agrees to or declines on its own.
public enum ConsentModule: String, Sendable, Codable, CaseIterable, Comparable {
    /// Taking part at all: every version has it, and it cannot be declined.
    case participation
    /// Sharing the answers with research beyond the study team.
    case researchSharing
    /// Location and background noise captured while answering.
    case context
    /// The person's diary readable by their therapist.
    case diaryWithTherapist
    /// Being contacted about future studies.
    case futureContact

    public var isRequired: Bool { self == .participation }

    /// The modules a study's consent may hold besides taking part, as versions written before say them.
    public static let optional = allCases.filter { !$0.isRequired }

    /// The modules a new version may offer: each is enforced where it applies (sharing with research decides who is
    /// in an export, context whether it is kept, the diary whether the therapist reads it). Nothing in Interlude
    /// contacts people about future studies, so that is no longer offered.
    public static let offerable = optional.filter { $0 != .futureContact }

    public static func < (lhs: ConsentModule, rhs: ConsentModule) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }
}

/// A new version of a study's consent as a researcher writes it; an existing version never changes.
public struct ConsentVersionDraft: Sendable, Equatable {
    public static let textMaxLength = StudyDraft.consentTextMaxLength
    public static let versionMaxLength = StudyDraft.consentVersionMaxLength

    public var version: String
    public var texts: LocalizedText
    /// The optional modules offered, in a fixed order.
    public var modules: [ConsentModule]
    /// Whether participants who agreed to an earlier version must answer this one before sending more data;
    /// otherwise it applies to those who join from now on.
    public var reconsentRequired: Bool
    /// The arm whose participants the version is for; nil: everybody. A participant's version in force is the latest
    /// of those for everybody and for their own arm, so a comparison can tell each arm what taking part in it means
    /// once the participant has been allocated (as consent is sought after randomisation in a Zelen design).
    public var arm: String?

    public init(
        version: String, texts: LocalizedText, modules: [ConsentModule], reconsentRequired: Bool, arm: String? = nil
    ) {
        self.version = version
        self.texts = texts
        self.modules = modules
        self.reconsentRequired = reconsentRequired
        self.arm = arm
    }

    /// Checks a version as written; `arm`, when given, must be one of the study's `arms`.
    public static func validate(
        version: String?, texts: [String: String], modules: [String], reconsentRequired: Bool, arm: String? = nil,
        arms: [String] = []
    ) throws(ValidationFailure) -> ConsentVersionDraft {
        var validator = FieldValidator()
        let cleanVersion = validator.text(version, field: "version", maxLength: versionMaxLength)
        let cleanArm = arm.flatMap { $0.isEmpty ? nil : $0 }
        if let cleanArm, !arms.contains(cleanArm) { validator.add("arm", .invalidValue) }
        var cleanTexts: [Language: String] = [:]
        for (code, text) in texts.sorted(by: { $0.key < $1.key }) {
            guard let language = Language(rawValue: code) else {
                validator.add("texts.\(code)", .notAllowed)
                continue
            }
            if let clean = validator.text(
                text, field: "texts.\(code)", required: false, maxLength: textMaxLength, lines: .multiple)
            {
                cleanTexts[language] = clean
            }
        }
        if cleanTexts.isEmpty, !validator.errors.contains(where: { $0.field.hasPrefix("texts") }) {
            validator.add("texts", .required)
        }
        var offered: Set<ConsentModule> = []
        for (index, raw) in modules.enumerated() {
            guard let module = ConsentModule(rawValue: raw) else {
                validator.add("modules[\(index)]", .invalidValue)
                continue
            }
            if !module.isRequired, !ConsentModule.offerable.contains(module) {
                validator.add("modules[\(index)]", .notAllowed)
            } else if !offered.insert(module).inserted {
                validator.add("modules[\(index)]", .duplicate)
            }
        }
        try validator.check()
        return ConsentVersionDraft(
            version: cleanVersion!, texts: LocalizedText(cleanTexts),
            modules: offered.filter { !$0.isRequired }.sorted(), reconsentRequired: reconsentRequired, arm: cleanArm)
    }
}

/// A person's answer to one consent version: every module offered, granted or declined.
public struct ConsentChoices: Sendable, Equatable, Codable {
    public static let maxAnswers = 10

    public var granted: [ConsentModule: Bool]

    public init(_ granted: [ConsentModule: Bool]) {
        self.granted = granted
    }

    /// Taking part and nothing else: how a join without choices is recorded.
    public static func participationOnly(offered: [ConsentModule]) -> ConsentChoices {
        var granted: [ConsentModule: Bool] = [.participation: true]
        for module in offered { granted[module] = false }
        return ConsentChoices(granted)
    }

    public func grants(_ module: ConsentModule) -> Bool { granted[module] ?? false }

    /// Checks the person's answers against the modules the version offers. Taking part must be granted; an
    /// optional module left out is declined; a module the version does not offer is refused.
    public static func validate(
        _ answers: [String: Bool], offered: [ConsentModule]
    ) throws(ValidationFailure) -> ConsentChoices {
        var validator = FieldValidator()
        guard answers.count <= maxAnswers else {
            throw ValidationFailure(field: "modules", code: .tooLong, limit: maxAnswers)
        }
        var granted: [ConsentModule: Bool] = [.participation: true]
        for module in offered { granted[module] = false }
        for (key, value) in answers.sorted(by: { $0.key < $1.key }) {
            guard let module = ConsentModule(rawValue: key) else {
                // A name far longer than any module's is not repeated back.
                validator.add(key.count <= 40 ? "modules.\(key)" : "modules", .unknown)
                continue
            }
            if module.isRequired {
                if !value { validator.add("modules.\(key)", .required) }
            } else if !offered.contains(module) {
                validator.add("modules.\(key)", .notAllowed)
            } else {
                granted[module] = value
            }
        }
        try validator.check()
        return ConsentChoices(granted)
    }

    public init(from decoder: any Decoder) throws {
        let raw = try decoder.singleValueContainer().decode([String: Bool].self)
        granted = Dictionary(
            uniqueKeysWithValues: raw.compactMap { key, value in ConsentModule(rawValue: key).map { ($0, value) } })
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(Dictionary(uniqueKeysWithValues: granted.map { ($0.key.rawValue, $0.value) }))
    }
}

/// Where a participant stands with a study's consent, from the sequence numbers of its versions.
public struct ConsentStanding: Sendable, Equatable {
    /// The sequence of the version the person last agreed to; nil when none of the study's versions.
    public let accepted: Int?
    /// The sequences of versions after it that were marked "re-consent required".
    public let requiringSince: [Int]

    public init(accepted: Int?, versions: [(sequence: Int, reconsentRequired: Bool)]) {
        self.accepted = accepted
        requiringSince =
            versions
            .filter { $0.reconsentRequired && $0.sequence > (accepted ?? 0) }
            .map(\.sequence).sorted()
    }

    /// Whether the person must answer the current version before the study takes more data from them.
    public var mustAnswer: Bool { !requiringSince.isEmpty }
}
