import Foundation

/// A checked partial edit of one's own account: only the fields given change.
public struct ProfileChange: Sendable, Equatable {
    public var name: String??
    public var language: Language?
    public var timeZone: String?
    public var shareWithResearch: Bool?
    /// A patient's switch for seeing their results against everyone's.
    public var hidesComparison: Bool?
    /// A patient's switch for letting their therapist keep context with answers.
    public var sharesContextWithTherapist: Bool?

    /// `name` may be an empty string to remove the name.
    public static func validate(
        name: String?, locale: String?, timeZone: String?, shareWithResearch: Bool?, hidesComparison: Bool? = nil,
        sharesContextWithTherapist: Bool? = nil
    ) throws(ValidationFailure) -> ProfileChange {
        var validator = FieldValidator()
        var change = ProfileChange()
        if let name {
            let before = validator.errors.count
            let checked = validator.text(name, field: "name", required: false, maxLength: Registration.nameMaxLength)
            if validator.errors.count == before { change.name = .some(checked) }
        }
        if let locale { change.language = AccountFields.language(locale, into: &validator) }
        if let timeZone { change.timeZone = AccountFields.timeZone(timeZone, into: &validator) }
        change.shareWithResearch = shareWithResearch
        change.hidesComparison = hidesComparison
        change.sharesContextWithTherapist = sharesContextWithTherapist
        try validator.check()
        return change
    }
}
