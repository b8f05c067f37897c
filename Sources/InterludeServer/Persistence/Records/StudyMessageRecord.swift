import Fluent
import Foundation

/// One message of a study's pool of reinforcement messages.
final class StudyMessageRecord: Model, @unchecked Sendable {
    static let schema = "study_messages"

    @ID(key: .id) var id: UUID?
    @Field(key: "created_at") var createdAt: Date
    @Parent(key: "study_id") var study: StudyRecord
    @Field(key: "text") var text: String

    /// Listed here so Fluent need not find them by reflection on every row (PropertyListTests keeps it whole).
    var properties: [any AnyProperty] { [$id, $createdAt, $study, $text] }

    init() {}

    init(studyID: UUID, text: String, now: Date) {
        self.$study.id = studyID
        self.text = text
        self.createdAt = now
    }
}
