import Fluent
import Foundation
import InterludeCore

/// A study, or a therapist's practice (a study joined by pairing code).
package final class StudyRecord: Model, @unchecked Sendable {
    package static let schema = "studies"

    // managed
    @ID(key: .id) package var id: UUID?
    @Field(key: "created_at") var createdAt: Date
    @Field(key: "updated_at") var updatedAt: Date

    // references
    @Parent(key: "owner_id") var owner: UserRecord

    // data
    /// The title in English, else in the language it has (`titles` holds every language).
    @Field(key: "title") var title: String
    @Field(key: "title_texts") var titleTexts: String
    @Field(key: "description") package var description: String
    @Field(key: "description_texts") var descriptionTexts: String
    @Field(key: "consent_text") var consentText: String
    @Field(key: "consent_version") var consentVersion: String
    @Field(key: "join_mode") var joinMode: JoinMode
    @OptionalField(key: "join_password_hash") var joinPasswordHash: String?
    @Field(key: "status") var status: StudyStatus
    /// The arms' names as a JSON array, when participants are split.
    @OptionalField(key: "arms") var arms: String?
    @OptionalField(key: "allocation") var allocation: ArmAllocation?
    /// How participants are allocated, with the seed of its random choices, as JSON (`AllocationDesign`); empty
    /// until the study's first allocation. Never leaves the server while the study runs.
    @Field(key: "allocation_design") var allocationDesign: String
    /// Whether exports carry participants' birth year and gender.
    @Field(key: "asks_demographics") var asksDemographics: Bool
    /// When it was last closed; nil while it runs.
    @OptionalField(key: "closed_at") var closedAt: Date?
    /// Days after closing until participants who took part in nothing else lose what identifies them.
    @Field(key: "retention_days") var retentionDays: Int
    /// The record kinds it collects, comma-separated.
    @Field(key: "record_kinds") var recordKinds: String
    /// The event types it adds, as a JSON array.
    @Field(key: "event_types") var eventTypes: String
    /// The event types' names per language where they have more than one, as JSON (type to `LocalizedText`).
    @Field(key: "event_type_names") var eventTypeNames: String
    /// The sample types asked for with their reasons, and the window, as JSON (`SampleSettings`); empty asks for none.
    @Field(key: "sample_settings") var sampleSettings: String
    /// Whether participants see their results against everyone's, and from when.
    @Field(key: "comparison") var comparison: ComparisonVisibility

    /// Listed here so Fluent need not find them by reflection on every row (PropertyListTests keeps it whole).
    package var properties: [any AnyProperty] {
        [
            $id, $createdAt, $updatedAt, $owner, $title, $titleTexts, $description, $descriptionTexts, $consentText,
            $consentVersion, $joinMode,
            $joinPasswordHash, $status, $arms, $allocation, $allocationDesign, $asksDemographics, $closedAt,
            $retentionDays, $recordKinds, $eventTypes, $eventTypeNames, $sampleSettings, $comparison,
        ]
    }

    package init() {}

    package init(
        ownerID: UUID, title: LocalizedText, description: LocalizedText, consentText: String, consentVersion: String,
        joinMode: JoinMode, joinPasswordHash: String?, status: StudyStatus, now: Date
    ) {
        self.$owner.id = ownerID
        self.titles = title
        self.descriptions = description
        self.consentText = consentText
        self.consentVersion = consentVersion
        self.joinMode = joinMode
        self.joinPasswordHash = joinPasswordHash
        self.status = status
        self.allocationDesign = ""
        self.asksDemographics = false
        self.retentionDays = StudyDraft.defaultRetentionDays
        self.recordKinds = ""
        self.eventTypes = "[]"
        self.eventTypeNames = ""
        self.sampleSettings = ""
        self.comparison = .off
        self.closedAt = status == .closed ? now : nil
        self.createdAt = now
        self.updatedAt = now
    }
}

extension StudyRecord {
    var titles: LocalizedText {
        get { LocalizedText(stored: titleTexts, plain: title) }
        set {
            title = newValue.text(.fallback)
            titleTexts = newValue.stored
        }
    }

    var descriptions: LocalizedText {
        get { LocalizedText(stored: descriptionTexts, plain: description) }
        set {
            description = newValue.text(.fallback)
            descriptionTexts = newValue.stored
        }
    }

    /// Which records and samples it collects, read leniently: a kind no longer known is left out.
    package var recordSettings: RecordSettings {
        get {
            RecordSettings(
                collects: Set(recordKinds.split(separator: ",").compactMap { RecordKind(rawValue: String($0)) }),
                eventTypes: (try? JSONDecoder().decode([String].self, from: Data(eventTypes.utf8))) ?? [],
                eventTypeNames: (try? JSONDecoder().decode(
                    [String: LocalizedText].self, from: Data(eventTypeNames.utf8))) ?? [:],
                samples: (try? JSONDecoder().decode(SampleSettings.self, from: Data(sampleSettings.utf8)))
                    ?? SampleSettings())
        }
        set {
            recordKinds = newValue.orderedKinds.map(\.rawValue).joined(separator: ",")
            eventTypes = String(
                decoding: (try? JSONEncoder().encode(newValue.eventTypes)) ?? Data("[]".utf8), as: UTF8.self)
            eventTypeNames =
                newValue.eventTypeNames.isEmpty
                ? "" : String(decoding: (try? JSONEncoder().encode(newValue.eventTypeNames)) ?? Data(), as: UTF8.self)
            sampleSettings =
                newValue.samples.requests.isEmpty
                ? "" : String(decoding: (try? JSONEncoder().encode(newValue.samples)) ?? Data(), as: UTF8.self)
        }
    }
}
