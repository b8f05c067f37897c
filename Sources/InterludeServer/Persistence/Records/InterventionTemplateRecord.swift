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
    /// The text in English, else in the language it has (`texts` holds every language).
    @Field(key: "text") var text: String
    @Field(key: "texts") var storedTexts: String

    /// Listed here so Fluent need not find them by reflection on every row (PropertyListTests keeps it whole).
    var properties: [any AnyProperty] { [$id, $createdAt, $study, $kind, $text, $storedTexts] }

    init() {}

    init(studyID: UUID, kind: InterventionKind, texts: LocalizedText, now: Date) {
        self.$study.id = studyID
        self.kind = kind
        self.texts = texts
        self.createdAt = now
    }
}

extension InterventionTemplateRecord: WrittenInLanguages {}
