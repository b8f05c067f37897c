import Fluent
import Foundation
import InterludeCore

/// One occurrence of an instrument for one participant, open from `opens_at` until `closes_at`.
package final class PromptRecord: Model, @unchecked Sendable {
    package static let schema = "prompts"

    // managed
    @ID(key: .id) package var id: UUID?
    @Field(key: "created_at") var createdAt: Date

    // references
    @Parent(key: "patient_id") var patient: UserRecord
    @OptionalParent(key: "study_id") var study: StudyRecord?
    @OptionalParent(key: "assigned_by") var assignedBy: UserRecord?

    // data
    @Field(key: "instrument_key") var instrumentKey: String
    @Field(key: "instrument_version") var instrumentVersion: Int
    @Field(key: "opens_at") var opensAt: Date
    @Field(key: "closes_at") var closesAt: Date
    @Field(key: "status") var status: PromptStatus
    @Field(key: "source") var source: PromptSource
    @OptionalField(key: "plan_id") var planID: UUID?
    @OptionalField(key: "occurrence") var occurrence: String?
    @OptionalField(key: "opened_at") var openedAt: Date?
    /// When the person's device first planned, and first showed, a notification of its own for the prompt.
    @OptionalField(key: "device_planned_at") var devicePlannedAt: Date?
    @OptionalField(key: "device_notified_at") var deviceNotifiedAt: Date?
    @OptionalField(key: "completed_at") var completedAt: Date?
    @OptionalField(key: "response_id") var responseID: UUID?
    /// Why it was withdrawn, when its status is cancelled.
    @OptionalField(key: "cancel_reason") var cancelReason: PromptCancelReason?
    /// When anything about it last changed, for apps that sync; set by `SyncStamps`.
    @OptionalField(key: "changed_at") var changedAt: Date?

    /// Listed here so Fluent need not find them by reflection on every row (PropertyListTests keeps it whole).
    package var properties: [any AnyProperty] {
        [
            $id, $createdAt, $patient, $study, $assignedBy, $instrumentKey, $instrumentVersion, $opensAt, $closesAt,
            $status, $source, $planID, $occurrence, $openedAt, $devicePlannedAt, $deviceNotifiedAt, $completedAt,
            $responseID, $cancelReason, $changedAt,
        ]
    }

    package init() {}

    package init(
        patientID: UUID, studyID: UUID?, assignedBy: UUID?, instrumentKey: String, instrumentVersion: Int,
        opensAt: Date, closesAt: Date, source: PromptSource, now: Date
    ) {
        self.$patient.id = patientID
        self.$study.id = studyID
        self.$assignedBy.id = assignedBy
        self.instrumentKey = instrumentKey
        self.instrumentVersion = instrumentVersion
        self.opensAt = opensAt
        self.closesAt = closesAt
        self.status = .scheduled
        self.source = source
        self.createdAt = now
    }
}
