import Fluent
import Foundation
import InterludeCore

/// A therapy session a patient (or their therapist) entered; title and comment are encrypted.
final class AppointmentRecord: Model, @unchecked Sendable {
    static let schema = "appointments"

    // managed
    @ID(key: .id) var id: UUID?
    @Field(key: "created_at") var createdAt: Date
    @Field(key: "updated_at") var updatedAt: Date
    /// Counts every change, so two devices editing the same appointment can tell who was first.
    @Field(key: "version") var version: Int

    // references
    @Parent(key: "patient_id") var patient: UserRecord
    @OptionalParent(key: "created_by") var createdBy: UserRecord?

    // data
    @Field(key: "title") var title: String
    @OptionalField(key: "comment") var comment: String?
    @Field(key: "starts_at") var startsAt: Date
    @Field(key: "ends_at") var endsAt: Date
    @Field(key: "time_zone") var timeZone: String

    // the patient's open request about a session the therapist booked
    @OptionalField(key: "request_kind") var requestKind: AppointmentRequestKind?
    @OptionalField(key: "request_starts_at") var requestStartsAt: Date?
    @OptionalField(key: "request_ends_at") var requestEndsAt: Date?
    /// Encrypted.
    @OptionalField(key: "request_note") var requestNote: String?
    @OptionalField(key: "requested_at") var requestedAt: Date?

    /// Listed here so Fluent need not find them by reflection on every row (PropertyListTests keeps it whole).
    var properties: [any AnyProperty] {
        [
            $id, $createdAt, $updatedAt, $version, $patient, $createdBy, $title, $comment, $startsAt, $endsAt,
            $timeZone,
            $requestKind, $requestStartsAt, $requestEndsAt, $requestNote, $requestedAt,
        ]
    }

    init() {}

    init(
        patientID: UUID, createdBy: UUID?, sealedTitle: String, sealedComment: String?, startsAt: Date, endsAt: Date,
        timeZone: String, now: Date
    ) {
        self.$patient.id = patientID
        self.$createdBy.id = createdBy
        self.title = sealedTitle
        self.comment = sealedComment
        self.startsAt = startsAt
        self.endsAt = endsAt
        self.timeZone = timeZone
        self.createdAt = now
        self.updatedAt = now
        self.version = 1
    }
}
