import Foundation

/// What a person invited by their therapist sends to take up the invitation: the account's password, language,
/// time zone and privacy choices (the address is the one invited), and the date of birth and gender their
/// therapist sees, as on pairing.
public struct InvitationAcceptance: Sendable, Equatable {
    public var registration: Registration
    public var dateOfBirth: LocalDate
    public var gender: Gender

    /// Checks every field at once and reports all problems together.
    public static func validate(
        email: String, password: String, privacyPolicyVersion: String, currentPrivacyPolicyVersion: String,
        shareWithResearch: Bool, locale: String, timeZone: String, name: String?, dateOfBirth: String, gender: String,
        today: LocalDate
    ) throws(ValidationFailure) -> InvitationAcceptance {
        var errors: [FieldError] = []
        var registration: Registration?
        do {
            registration = try Registration.validate(
                email: email, password: password, privacyPolicyVersion: privacyPolicyVersion,
                currentPrivacyPolicyVersion: currentPrivacyPolicyVersion, shareWithResearch: shareWithResearch,
                locale: locale, timeZone: timeZone, name: name)
        } catch {
            errors = error.errors
        }
        var validator = FieldValidator()
        let details = PairingRequest.details(dateOfBirth: dateOfBirth, gender: gender, today: today, into: &validator)
        errors += validator.errors
        guard errors.isEmpty, let registration, let details else { throw ValidationFailure(errors) }
        return InvitationAcceptance(
            registration: registration, dateOfBirth: details.dateOfBirth, gender: details.gender)
    }
}
