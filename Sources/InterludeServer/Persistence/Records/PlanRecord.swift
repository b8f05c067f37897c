import Fluent
import Foundation

/// A schedule attached to a study (all participants or one arm) or to one patient.
package final class PlanRecord: Model, @unchecked Sendable {
    package static let schema = "plans"

    // managed
    @ID(key: .id) package var id: UUID?
    @Field(key: "created_at") var createdAt: Date
    @Field(key: "updated_at") var updatedAt: Date

    // references
    @Parent(key: "study_id") var study: StudyRecord
    @OptionalParent(key: "patient_id") var patient: UserRecord?
    @Parent(key: "created_by") var createdBy: UserRecord

    // data
    @OptionalField(key: "arm") var arm: String?
    @Field(key: "instrument_key") var instrumentKey: String
    @Field(key: "definition") var definition: String
    /// Set while the questionnaire is deactivated: its waiting prompts show as inactive and nothing new is planned.
    @OptionalField(key: "deactivated_at") var deactivatedAt: Date?

    /// Listed here so Fluent need not find them by reflection on every row (PropertyListTests keeps it whole).
    package var properties: [any AnyProperty] {
        [$id, $createdAt, $updatedAt, $study, $patient, $createdBy, $arm, $instrumentKey, $definition, $deactivatedAt]
    }

    package init() {}

    package init(
        studyID: UUID, patientID: UUID?, arm: String?, createdBy: UUID, instrumentKey: String, definition: String,
        now: Date
    ) {
        self.$study.id = studyID
        self.$patient.id = patientID
        self.arm = arm
        self.$createdBy.id = createdBy
        self.instrumentKey = instrumentKey
        self.definition = definition
        self.createdAt = now
        self.updatedAt = now
    }
}
