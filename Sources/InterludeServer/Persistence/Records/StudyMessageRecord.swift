import Fluent
import Foundation
import InterludeCore

/// One message of a study's pool of reinforcement messages.
final class StudyMessageRecord: Model, @unchecked Sendable {
    static let schema = "study_messages"

    @ID(key: .id) var id: UUID?
    @Field(key: "created_at") var createdAt: Date
    @Parent(key: "study_id") var study: StudyRecord
    /// The text in English, else in the language it has (`texts` holds every language).
    @Field(key: "text") var text: String
    @Field(key: "texts") var storedTexts: String

    /// Listed here so Fluent need not find them by reflection on every row (PropertyListTests keeps it whole).
    var properties: [any AnyProperty] { [$id, $createdAt, $study, $text, $storedTexts] }

    init() {}

    init(studyID: UUID, texts: LocalizedText, now: Date) {
        self.$study.id = studyID
        self.texts = texts
        self.createdAt = now
    }
}

extension StudyMessageRecord: WrittenInLanguages {}
