import Fluent
import Foundation
import InterludeCore

/// A staff member's role in one study.
package final class StudyStaffRecord: Model, @unchecked Sendable {
    package static let schema = "study_staff"

    // managed
    @ID(key: .id) package var id: UUID?

    // references
    @Parent(key: "study_id") var study: StudyRecord
    @Parent(key: "user_id") var user: UserRecord

    // data
    @Field(key: "role") var role: StudyRole

    /// Listed here so Fluent need not find them by reflection on every row (PropertyListTests keeps it whole).
    package var properties: [any AnyProperty] { [$id, $study, $user, $role] }

    package init() {}

    package init(studyID: UUID, userID: UUID, role: StudyRole) {
        self.$study.id = studyID
        self.$user.id = userID
        self.role = role
    }
}
