import Fluent
import Foundation
import InterludeCore

/// The tombstone an erasure leaves: that an account of a role, or one person's data in a study, was erased, and
/// when; nothing about whom. The erased ids are kept as keyed hashes in `erased_ids`.
final class ErasureRecord: Model, @unchecked Sendable {
    static let schema = "erasures"

    // managed
    @ID(key: .id) var id: UUID?

    // references
    /// The study whose data was erased, for a `studyData` erasure.
    @OptionalParent(key: "study_id") var study: StudyRecord?

    // data
    @Field(key: "role") var role: Role
    @Field(key: "erased_at") var erasedAt: Date
    @Field(key: "scope") var scope: ErasureScope

    @Children(for: \.$erasure) var erasedIDs: [ErasedIDRecord]

    /// Listed here so Fluent need not find them by reflection on every row (PropertyListTests keeps it whole).
    var properties: [any AnyProperty] { [$id, $study, $role, $erasedAt, $scope, $erasedIDs] }

    init() {}

    init(id: UUID, role: Role, scope: ErasureScope, studyID: UUID? = nil, erasedAt: Date) {
        self.id = id
        self.role = role
        self.scope = scope
        self.$study.id = studyID
        self.erasedAt = erasedAt
    }
}
