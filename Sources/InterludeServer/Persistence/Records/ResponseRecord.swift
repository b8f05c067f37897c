import Fluent
import Foundation

/// A completed questionnaire: the answers and the scores computed from them (both encrypted), and when it happened.
/// The id is the one the client generated, so a retried submission finds the first.
package final class ResponseRecord: Model, @unchecked Sendable {
    package static let schema = "responses"

    // managed
    @ID(custom: .id, generatedBy: .user) package var id: UUID?

    // references
    @Parent(key: "patient_id") var patient: UserRecord
    @OptionalParent(key: "prompt_id") var prompt: PromptRecord?
    /// The study of the prompt it answers.
    @OptionalField(key: "study_id") var studyID: UUID?

    // data
    @Field(key: "instrument_key") var instrumentKey: String
    @Field(key: "instrument_version") var instrumentVersion: Int
    @Field(key: "answers") var answers: String
    /// Sealed by `FieldCipher`, like the answers.
    @Field(key: "scores") var scores: String
    /// Where and in what noise it was answered (`AnswerContext` as JSON, sealed); only where the person agreed.
    @OptionalField(key: "context") var context: String?
    /// Paradata: the seconds the person spent on each item, by item id (JSON).
    @OptionalField(key: "item_times") var itemTimes: String?
    /// `ResponseQuality` worked out when it arrived (JSON).
    @OptionalField(key: "quality") var quality: String?
    @OptionalField(key: "opened_at") var openedAt: Date?
    @OptionalField(key: "started_at") var startedAt: Date?
    @Field(key: "completed_at") var completedAt: Date
    @Field(key: "received_at") var receivedAt: Date

    /// Listed here so Fluent need not find them by reflection on every row (PropertyListTests keeps it whole).
    package var properties: [any AnyProperty] {
        [
            $id, $patient, $prompt, $studyID, $instrumentKey, $instrumentVersion, $answers, $scores, $context,
            $itemTimes, $quality, $openedAt,
            $startedAt, $completedAt, $receivedAt,
        ]
    }

    package init() {}

    init(
        id: UUID, patientID: UUID, promptID: UUID?, instrumentKey: String, instrumentVersion: Int,
        sealedAnswers: String,
        scores: String, openedAt: Date?, startedAt: Date?, completedAt: Date, receivedAt: Date
    ) {
        self.id = id
        self.$patient.id = patientID
        self.$prompt.id = promptID
        self.instrumentKey = instrumentKey
        self.instrumentVersion = instrumentVersion
        self.answers = sealedAnswers
        self.scores = scores
        self.openedAt = openedAt
        self.startedAt = startedAt
        self.completedAt = completedAt
        self.receivedAt = receivedAt
    }
}
