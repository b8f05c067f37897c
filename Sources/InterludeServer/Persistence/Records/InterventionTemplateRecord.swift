import Fluent
import Foundation
import InterludeCore

/// A ready-made intervention text of a study, for therapists to send with one click.
final class InterventionTemplateRecord: Model, @unchecked Sendable {
    static let schema = "intervention_templates"

    @ID(key: .id) var id: UUID?
    @Field(key: "created_at") var createdAt: Date
    @Parent(key: "study_id") var study: StudyRecord
    @Field(key: "kind") var kind: InterventionKind
    @Field(key: "text") var text: String

    /// Listed here so Fluent need not find them by reflection on every row (PropertyListTests keeps it whole).
    var properties: [any AnyProperty] { [$id, $createdAt, $study, $kind, $text] }

    init() {}

    init(studyID: UUID, kind: InterventionKind, text: String, now: Date) {
        self.$study.id = studyID
        self.kind = kind
        self.text = text
        self.createdAt = now
    }
}
