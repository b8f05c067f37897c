import Fluent
import Foundation

/// The profile a therapist shows their paired patients.
package final class TherapistProfileRecord: Model, @unchecked Sendable {
    package static let schema = "therapist_profiles"

    // managed
    @ID(key: .id) package var id: UUID?

    // references
    @Parent(key: "user_id") var user: UserRecord

    // data
    @Field(key: "full_name") var fullName: String
    @OptionalField(key: "gender") var gender: String?
    @OptionalField(key: "office_address") var officeAddress: String?
    @OptionalField(key: "phone") var phone: String?
    @OptionalField(key: "emergency_number") var emergencyNumber: String?

    /// Listed here so Fluent need not find them by reflection on every row (PropertyListTests keeps it whole).
    package var properties: [any AnyProperty] {
        [$id, $user, $fullName, $gender, $officeAddress, $phone, $emergencyNumber]
    }

    package init() {}

    package init(userID: UUID, fullName: String) {
        self.$user.id = userID
        self.fullName = fullName
    }
}
