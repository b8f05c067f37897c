import Fluent
import Foundation

/// What Interlude knows about a patient beyond the account.
package final class PatientProfileRecord: Model, @unchecked Sendable {
    package static let schema = "patient_profiles"

    // managed
    @ID(key: .id) package var id: UUID?

    // references
    @Parent(key: "user_id") var user: UserRecord

    // data
    @Field(key: "pseudonym") var pseudonym: String
    @Field(key: "share_with_research") var shareWithResearch: Bool
    @OptionalField(key: "date_of_birth") var dateOfBirth: String?
    @OptionalField(key: "gender") var gender: String?
    @OptionalField(key: "therapy_start") var therapyStart: String?
    @OptionalField(key: "therapy_end") var therapyEnd: String?
    /// The person's own switch: they do not want to see their results against everyone's.
    @Field(key: "hides_comparison") var hidesComparison: Bool
    /// The person's own switch: their therapist may keep the position and noise level of answers to questionnaires
    /// that ask for them (a practice has no consent document of its own for this).
    @Field(key: "shares_context_with_therapist") var sharesContextWithTherapist: Bool

    /// Listed here so Fluent need not find them by reflection on every row (PropertyListTests keeps it whole).
    package var properties: [any AnyProperty] {
        [
            $id, $user, $pseudonym, $shareWithResearch, $dateOfBirth, $gender, $therapyStart, $therapyEnd,
            $hidesComparison,
            $sharesContextWithTherapist,
        ]
    }

    package init() {}

    package init(userID: UUID, pseudonym: String, shareWithResearch: Bool) {
        self.$user.id = userID
        self.pseudonym = pseudonym
        self.shareWithResearch = shareWithResearch
        self.hidesComparison = false
        self.sharesContextWithTherapist = false
    }
}
