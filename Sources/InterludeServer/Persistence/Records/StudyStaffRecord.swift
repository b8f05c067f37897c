import Fluent
import Foundation
import InterludeCore

/// A staff member's role in one study.
final class StudyStaffRecord: Model, @unchecked Sendable {
    static let schema = "study_staff"

    // managed
    @ID(key: .id) var id: UUID?

    // references
    @Parent(key: "study_id") var study: StudyRecord
    @Parent(key: "user_id") var user: UserRecord

    // data
    @Field(key: "role") var role: StudyRole

    /// Listed here so Fluent need not find them by reflection on every row (PropertyListTests keeps it whole).
    var properties: [any AnyProperty] { [$id, $study, $user, $role] }

    init() {}

    init(studyID: UUID, userID: UUID, role: StudyRole) {
        self.$study.id = studyID
        self.$user.id = userID
        self.role = role
    }
}
