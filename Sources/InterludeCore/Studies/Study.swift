import Foundation

/// How a participant gets into a study.
public enum JoinMode: String, Sendable, Codable, CaseIterable {
    /// A therapist's practice: patients join by redeeming the therapist's pairing code.
    case pairingCode
    /// Anyone may join after accepting the consent.
    case open
    /// Joining needs the study password.
    case password
    /// A join request waits until a researcher approves it.
    case approval
}

public enum StudyStatus: String, Sendable, Codable, CaseIterable {
    case running
    case closed
}

public enum EnrollmentStatus: String, Sendable, Codable, CaseIterable {
    case requested
    case active
    case withdrawn
    case declined
    case ended

    /// Whether a participant in this state currently belongs to the study or is waiting to.
    public var isCurrent: Bool { self == .requested || self == .active }
}

/// The role a staff member holds inside one study.
public enum StudyRole: String, Sendable, Codable, CaseIterable {
    case owner
    case therapist
    case researcher
    /// Exports the study's data and sees nothing else of it.
    case dataManager
}

/// A checked definition of a study as a researcher writes it.
public struct StudyDraft: Sendable, Equatable {
    public static let titleMaxLength = 200
    public static let descriptionMaxLength = 5000
    public static let consentTextMaxLength = 50_000
    public static let consentVersionMaxLength = 40
    public static let passwordMinLength = 4
    public static let passwordMaxLength = 128

    /// The title, description and first consent text in each language the researcher wrote them in.
    public var titles: LocalizedText
    public var descriptions: LocalizedText
    public var consentTexts: LocalizedText
    public var consentVersion: String
    public var joinMode: JoinMode
    /// Present exactly when `joinMode` is `.password` and a new password is set.
    public var joinPassword: String?
    public var status: StudyStatus
    /// The arms participants are split into, if any, and how.
    public var arms: [String]
    public var allocation: ArmAllocation
    public var allocationSettings: AllocationSettings
    /// Whether participants' birth year and gender go into the study's research exports; without it, never.
    public var asksDemographics: Bool
    /// Days after the study closes until the accounts of those who took part in nothing else lose what identifies
    /// them; the pseudonymised research data stays.
    public var retentionDays: Int
    /// Whether participants see their results against everyone's, and from when.
    public var comparison: ComparisonVisibility = .off

    public static let defaultRetentionDays = 365
    public static let retentionDaysRange = 0...3650

    public static let armsMaxCount = 10
    public static let armNameMaxLength = 60

    /// The title in English, else in the language it has.
    public var title: String { titles.text(.fallback) }
    public var description: String { descriptions.text(.fallback) }
    public var consentText: String { consentTexts.text(.fallback) }

    /// `hasPassword` tells whether the study already has a password, so an edit may keep it. Title, description
    /// and consent text may come in both languages; a problem in the German one names e.g. `titles.de`.
    public static func validate(
        title: [Language: String?], description: [Language: String?], consentText: [Language: String?],
        consentVersion: String?,
        joinMode: String?, joinPassword: String?, status: String?, hasPassword: Bool = false, arms: [String] = [],
        allocation: String? = nil, allocationSettings: AllocationSettings = AllocationSettings(),
        asksDemographics: Bool = false, retentionDays: Int = defaultRetentionDays,
        comparison: String? = nil
    ) throws(ValidationFailure) -> StudyDraft {
        var validator = FieldValidator()
        let cleanTitle = validator.texts(title, field: "title", perLanguage: "titles", maxLength: titleMaxLength)
        let cleanDescription =
            validator.texts(
                description, field: "description", perLanguage: "descriptions", required: false,
                maxLength: descriptionMaxLength, lines: .multiple)
            ?? LocalizedText([:])
        let cleanConsent = validator.texts(
            consentText, field: "consentText", perLanguage: "consentTexts", maxLength: consentTextMaxLength,
            lines: .multiple)
        let cleanVersion = validator.text(consentVersion, field: "consentVersion", maxLength: consentVersionMaxLength)
        let mode = JoinMode(rawValue: joinMode ?? "")
        if mode == nil || mode == .pairingCode {
            validator.add("joinMode", (joinMode ?? "").isEmpty ? .required : .invalidValue)
        }
        var password: String?
        if mode == .password {
            let given = joinPassword ?? ""
            if given.isEmpty {
                if !hasPassword { validator.add("joinPassword", .required) }
            } else if given.count < passwordMinLength {
                validator.add("joinPassword", .tooShort, limit: passwordMinLength)
            } else if given.count > passwordMaxLength {
                validator.add("joinPassword", .tooLong, limit: passwordMaxLength)
            } else {
                password = given
            }
        }
        let parsedStatus = StudyStatus(rawValue: status ?? StudyStatus.running.rawValue)
        if parsedStatus == nil { validator.add("status", .invalidValue) }
        let (cleanArms, parsedAllocation) = checkArms(
            arms, allocation: allocation, settings: allocationSettings, into: &validator)
        if !retentionDaysRange.contains(retentionDays) {
            validator.add("retentionDays", .outOfRange, limit: retentionDaysRange.upperBound)
        }
        let parsedComparison = ComparisonVisibility(rawValue: comparison ?? ComparisonVisibility.off.rawValue)
        if parsedComparison == nil { validator.add("comparison", .invalidValue) }
        try validator.check()
        return StudyDraft(
            titles: cleanTitle!, descriptions: cleanDescription, consentTexts: cleanConsent!,
            consentVersion: cleanVersion!, joinMode: mode!, joinPassword: password, status: parsedStatus!,
            arms: cleanArms, allocation: parsedAllocation!, allocationSettings: allocationSettings,
            asksDemographics: asksDemographics,
            retentionDays: retentionDays,
            comparison: parsedComparison!)
    }
}

extension StudyDraft {
    /// A study's arms and how participants are allocated to them, checked: none (no arms) or two to ten names, a
    /// method and settings that make a design.
    public static func validateArms(_ arms: [String], allocation: String?, settings: AllocationSettings)
        throws(ValidationFailure) -> (arms: [String], allocation: ArmAllocation)
    {
        var validator = FieldValidator()
        let (clean, parsed) = checkArms(arms, allocation: allocation, settings: settings, into: &validator)
        try validator.check()
        return (clean, parsed!)
    }

    static func checkArms(
        _ arms: [String], allocation: String?, settings: AllocationSettings, into validator: inout FieldValidator
    ) -> ([String], ArmAllocation?) {
        let cleanArms = arms.map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        if cleanArms.count > armsMaxCount { validator.add("arms", .tooLong, limit: armsMaxCount) }
        if Set(cleanArms).count != cleanArms.count { validator.add("arms", .duplicate) }
        if cleanArms.contains(where: { $0.count > armNameMaxLength }) {
            validator.add("arms", .tooLong, limit: armNameMaxLength)
        }
        if cleanArms.count == 1 { validator.add("arms", .tooShort, limit: 2) }
        let parsedAllocation = ArmAllocation(rawValue: allocation ?? ArmAllocation.alternating.rawValue)
        if parsedAllocation == nil { validator.add("allocation", .invalidValue) }
        let settingsProblems =
            if let parsedAllocation, cleanArms.count >= 2 {
                settings.design(
                    arms: cleanArms, allocation: parsedAllocation, seed: 0, today: LocalDate(daysSinceEpoch: 0)
                ).problems
            } else {
                settings.problems()
            }
        for problem in settingsProblems { validator.add(problem.field, problem.code, limit: problem.limit) }
        return (cleanArms, parsedAllocation)
    }
}

/// Why a participant may not join a study, in the order they are checked.
public enum JoinRefusal: Error, Equatable, Sendable {
    case studyClosed
    case notJoinable
    case alreadyEnrolled
    case consentVersionOutdated
    case wrongPassword
}

/// Decides whether a participant may join a study and in which state the enrolment starts.
public enum JoinDecision {
    public static func decide(
        joinMode: JoinMode, status: StudyStatus, currentConsentVersion: String,
        acceptedConsentVersion: String, hasCurrentEnrollment: Bool, passwordMatches: Bool
    ) throws(JoinRefusal) -> EnrollmentStatus {
        guard status == .running else { throw .studyClosed }
        guard joinMode != .pairingCode else { throw .notJoinable }
        guard !hasCurrentEnrollment else { throw .alreadyEnrolled }
        guard acceptedConsentVersion == currentConsentVersion else { throw .consentVersionOutdated }
        switch joinMode {
        case .open: return .active
        case .password:
            guard passwordMatches else { throw .wrongPassword }
            return .active
        case .approval: return .requested
        case .pairingCode: throw .notJoinable
        }
    }
}
