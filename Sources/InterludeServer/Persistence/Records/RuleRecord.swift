import Fluent
import Foundation

/// A study's rule (a `StudyRule` as JSON).
final class RuleRecord: Model, @unchecked Sendable {
    static let schema = "study_rules"

    @ID(key: .id) var id: UUID?
    @Field(key: "created_at") var createdAt: Date
    @Parent(key: "study_id") var study: StudyRecord
    @OptionalParent(key: "created_by") var createdBy: UserRecord?
    @Field(key: "definition") var definition: String

    /// Listed here so Fluent need not find them by reflection on every row (PropertyListTests keeps it whole).
    var properties: [any AnyProperty] { [$id, $createdAt, $study, $createdBy, $definition] }

    init() {}

    init(studyID: UUID, createdBy: UUID?, definition: String, now: Date) {
        self.$study.id = studyID
        self.$createdBy.id = createdBy
        self.definition = definition
        self.createdAt = now
    }
}
