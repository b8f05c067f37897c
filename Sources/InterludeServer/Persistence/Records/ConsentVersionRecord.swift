import Fluent
import Foundation
import InterludeCore

/// One version of a study's consent: its text in each language, the optional modules it offers, what the study
/// collects with it, and whether participants who agreed to an earlier version must answer it. Written once, never
/// changed once anybody has answered it.
final class ConsentVersionRecord: Model, @unchecked Sendable {
    static let schema = "consent_versions"

    // managed
    @ID(key: .id) var id: UUID?
    @Field(key: "created_at") var createdAt: Date

    // references
    @Parent(key: "study_id") var study: StudyRecord

    // data
    /// 1 for a study's first version, one more for each after it.
    @Field(key: "sequence") var sequence: Int
    @Field(key: "version") var version: String
    /// The text per language as a JSON object (`{"en": "…"}`).
    @Field(key: "texts") var texts: String
    /// The optional modules offered, as a JSON array of module names.
    @Field(key: "modules") var modules: String
    @Field(key: "reconsent_required") var reconsentRequired: Bool
    /// The kinds of records the study collected when the version was written, as the study lists them
    /// (`mood,thought`): what a participant agreeing to it agreed to be collected.
    @OptionalField(key: "collects") var collects: String?
    /// The arm whose participants the version is for; nil: everybody.
    @OptionalField(key: "arm") var arm: String?

    /// Listed here so Fluent need not find them by reflection on every row (PropertyListTests keeps it whole).
    var properties: [any AnyProperty] {
        [$id, $createdAt, $study, $sequence, $version, $texts, $modules, $reconsentRequired, $collects, $arm]
    }

    init() {}

    init(studyID: UUID, sequence: Int, draft: ConsentVersionDraft, now: Date) throws {
        self.$study.id = studyID
        self.sequence = sequence
        self.version = draft.version
        self.texts = String(decoding: try JSONEncoder().encode(draft.texts), as: UTF8.self)
        self.modules = String(decoding: try JSONEncoder().encode(draft.modules), as: UTF8.self)
        self.reconsentRequired = draft.reconsentRequired
        self.arm = draft.arm
        self.createdAt = now
    }

    var localizedTexts: LocalizedText {
        (try? JSONDecoder().decode(LocalizedText.self, from: Data(texts.utf8))) ?? LocalizedText([:])
    }

    var collectedKinds: Set<RecordKind> {
        Set((collects ?? "").split(separator: ",").compactMap { RecordKind(rawValue: String($0)) })
    }

    var offeredModules: [ConsentModule] {
        ((try? JSONDecoder().decode([String].self, from: Data(modules.utf8))) ?? []).compactMap(ConsentModule.init)
            .sorted()
    }
}
