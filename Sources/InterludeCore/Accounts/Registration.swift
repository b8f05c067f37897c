import Foundation

/// A checked request to create a patient account.
public struct Registration: Sendable, Equatable {
    public static let nameMaxLength = 100

    public var email: EmailAddress
    public var password: String
    public var privacyPolicyVersion: String
    public var shareWithResearch: Bool
    public var language: Language
    public var timeZone: String
    public var name: String?

    /// Checks every field at once and reports all problems together.
    public static func validate(
        email: String,
        password: String,
        privacyPolicyVersion: String,
        currentPrivacyPolicyVersion: String,
        shareWithResearch: Bool,
        locale: String,
        timeZone: String,
        name: String?
    ) throws(ValidationFailure) -> Registration {
        var validator = FieldValidator()
        let address = AccountFields.email(email, into: &validator)
        PasswordPolicy.check(password, email: email, into: &validator)
        if privacyPolicyVersion.isEmpty {
            validator.add("privacyPolicyVersion", .required)
        } else if privacyPolicyVersion != currentPrivacyPolicyVersion {
            validator.add("privacyPolicyVersion", .outdated)
        }
        let language = AccountFields.language(locale, into: &validator)
        let zone = AccountFields.timeZone(timeZone, into: &validator)
        let cleanName = validator.text(name, field: "name", required: false, maxLength: nameMaxLength)
        try validator.check()
        return Registration(
            email: address!, password: password, privacyPolicyVersion: privacyPolicyVersion,
            shareWithResearch: shareWithResearch, language: language!, timeZone: zone!, name: cleanName)
    }
}

/// The checks shared by every form that carries account fields.
public enum AccountFields {
    public static func email(_ raw: String, field: String = "email", into validator: inout FieldValidator)
        -> EmailAddress?
    {
        let trimmed = raw.trimmingCharacters(in: .whitespacesAndNewlines)
        if trimmed.isEmpty {
            validator.add(field, .required)
            return nil
        }
        if trimmed.count > EmailAddress.maxLength {
            validator.add(field, .tooLong, limit: EmailAddress.maxLength)
            return nil
        }
        guard let address = EmailAddress(trimmed) else {
            validator.add(field, .invalidFormat)
            return nil
        }
        return address
    }

    public static func language(_ raw: String, field: String = "locale", into validator: inout FieldValidator)
        -> Language?
    {
        guard let language = Language(rawValue: raw) else {
            validator.add(field, raw.isEmpty ? .required : .invalidValue)
            return nil
        }
        return language
    }

    public static func timeZone(_ raw: String, field: String = "timeZone", into validator: inout FieldValidator)
        -> String?
    {
        guard TimeZoneName.isValid(raw) else {
            validator.add(field, raw.isEmpty ? .required : .invalidValue)
            return nil
        }
        return raw
    }
}
