import Fluent
import Foundation

/// A study's message plan (a `MessagePlan` as JSON); at most one per study.
final class MessagePlanRecord: Model, @unchecked Sendable {
    static let schema = "message_plans"

    @ID(key: .id) var id: UUID?
    @Field(key: "created_at") var createdAt: Date
    @Parent(key: "study_id") var study: StudyRecord
    @Field(key: "definition") var definition: String

    /// Listed here so Fluent need not find them by reflection on every row (PropertyListTests keeps it whole).
    var properties: [any AnyProperty] { [$id, $createdAt, $study, $definition] }

    init() {}

    init(studyID: UUID, definition: String, now: Date) {
        self.$study.id = studyID
        self.definition = definition
        self.createdAt = now
    }
}
