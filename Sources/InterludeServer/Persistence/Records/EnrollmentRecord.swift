import Fluent
import Foundation
import InterludeCore

/// A participant's membership in a study, with the therapist when the study is a practice.
package final class EnrollmentRecord: Model, @unchecked Sendable {
    package static let schema = "enrollments"

    // managed
    @ID(key: .id) package var id: UUID?
    @Field(key: "created_at") var createdAt: Date
    @Field(key: "updated_at") var updatedAt: Date

    // references
    @Parent(key: "study_id") var study: StudyRecord
    @Parent(key: "patient_id") var patient: UserRecord
    @OptionalParent(key: "therapist_id") var therapist: UserRecord?

    // data
    @Field(key: "status") var status: EnrollmentStatus
    @Field(key: "consent_version") var consentVersion: String
    @OptionalField(key: "arm") var arm: String?
    /// In a practice: the name the therapist shows the client under, when they set one.
    @OptionalField(key: "display_name") var displayName: String?
    /// In a practice: since when the therapist paused the treatment; nothing is planned while it is set.
    @OptionalField(key: "paused_at") var pausedAt: Date?
    /// When the person began taking part: on joining, or when a request was approved; nil while requested.
    @OptionalField(key: "started_at") var startedAt: Date?
    /// When the treatment ended or the person left; nil while it goes on.
    @OptionalField(key: "ended_at") var endedAt: Date?

    /// Listed here so Fluent need not find them by reflection on every row (PropertyListTests keeps it whole).
    package var properties: [any AnyProperty] {
        [
            $id, $createdAt, $updatedAt, $study, $patient, $therapist, $status, $consentVersion, $arm, $displayName,
            $pausedAt, $startedAt, $endedAt,
        ]
    }

    package init() {}

    package init(
        studyID: UUID, patientID: UUID, therapistID: UUID?, status: EnrollmentStatus, consentVersion: String, now: Date
    ) {
        self.$study.id = studyID
        self.$patient.id = patientID
        self.$therapist.id = therapistID
        self.status = status
        self.consentVersion = consentVersion
        self.createdAt = now
        self.updatedAt = now
        self.startedAt = status == .active ? now : nil
    }

    /// Ends the enrolment as `status` (ended or withdrawn) at `now`.
    func end(as status: EnrollmentStatus, at now: Date) {
        self.status = status
        endedAt = endedAt ?? now
        updatedAt = now
    }
}

extension EnrollmentRecord {
    /// Whether the person took part at `moment`: from joining (or the approval of the request) until the end.
    func wasActive(at moment: Date) -> Bool {
        guard let startedAt, startedAt <= moment else { return false }
        return endedAt.map { moment <= $0 } ?? true
    }

    /// When the treatment ended, if it did: what the patient does afterwards is not the former therapist's to see.
    var treatmentEnd: Date? { status == .ended ? endedAt ?? updatedAt : nil }

    /// Where the treatment of a practice's client stands.
    var treatmentStatus: TreatmentStatus {
        if status == .ended { return .ended }
        return pausedAt == nil ? .active : .paused
    }
}
