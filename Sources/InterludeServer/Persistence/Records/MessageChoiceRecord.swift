import Fluent
import Foundation

/// How many of a study's reinforcement messages a participant wants a day, and when: their choice inside the
/// study's message plan, where the plan lets them choose. One per participant and study.
final class MessageChoiceRecord: Model, @unchecked Sendable {
    static let schema = "message_choices"

    @ID(key: .id) var id: UUID?
    @Parent(key: "patient_id") var patient: UserRecord
    @Parent(key: "study_id") var study: StudyRecord
    @Field(key: "per_day") var perDay: Int
    /// `HH:MM`, local time.
    @Field(key: "window_start") var windowStart: String
    @Field(key: "window_end") var windowEnd: String
    @Field(key: "changed_at") var changedAt: Date

    /// Listed here so Fluent need not find them by reflection on every row (PropertyListTests keeps it whole).
    var properties: [any AnyProperty] { [$id, $patient, $study, $perDay, $windowStart, $windowEnd, $changedAt] }

    init() {}

    init(patientID: UUID, studyID: UUID, now: Date) {
        self.$patient.id = patientID
        self.$study.id = studyID
        self.perDay = 0
        self.windowStart = ""
        self.windowEnd = ""
        self.changedAt = now
    }
}
