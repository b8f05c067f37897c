import Fluent
import Foundation
import InterludeCore

/// One export of a study's research data, from queued to a zip file ready for download, and who asked for it.
package final class ExportRecord: Model, @unchecked Sendable {
    package static let schema = "exports"

    // managed
    @ID(key: .id) package var id: UUID?
    @Field(key: "created_at") var createdAt: Date

    // references
    @Parent(key: "study_id") var study: StudyRecord
    /// Nil once the person who asked for it has been erased.
    @OptionalParent(key: "requested_by") var requestedBy: UserRecord?

    // data
    /// Only what changed after this instant, when set.
    @OptionalField(key: "since") var since: Date?
    @Field(key: "status") package var status: ExportStatus
    @Field(key: "progress") package var progress: Int
    @Field(key: "participants") var participants: Int
    @Field(key: "prompts") var prompts: Int
    @Field(key: "responses") var responses: Int
    /// Why it failed, in words for the researcher.
    @OptionalField(key: "error") var error: String?
    /// A worker holds it until then; after that another may start it over.
    @OptionalField(key: "claimed_until") var claimedUntil: Date?
    /// The worker's run that holds it, so a run that lost it to another stops.
    @OptionalField(key: "claimed_by") var claimedBy: UUID?
    @OptionalField(key: "finished_at") package var finishedAt: Date?
    @OptionalField(key: "expires_at") package var expiresAt: Date?
    @OptionalField(key: "size") package var size: Int64?
    @OptionalField(key: "sha256") var sha256: String?

    /// Listed here so Fluent need not find them by reflection on every row (PropertyListTests keeps it whole).
    package var properties: [any AnyProperty] {
        [
            $id, $createdAt, $study, $requestedBy, $since, $status, $progress, $participants, $prompts, $responses,
            $error, $claimedUntil, $claimedBy, $finishedAt, $expiresAt, $size, $sha256,
        ]
    }

    package init() {}

    package init(studyID: UUID, requestedBy: UUID, since: Date?, now: Date) {
        self.$study.id = studyID
        self.$requestedBy.id = requestedBy
        self.since = since
        self.status = .queued
        self.progress = 0
        self.participants = 0
        self.prompts = 0
        self.responses = 0
        self.createdAt = now
    }
}

/// A participant whose data went into an export: the export log that remains when they later stop sharing.
final class ExportParticipantRecord: Model, @unchecked Sendable {
    static let schema = "export_participants"

    @ID(key: .id) var id: UUID?
    @Parent(key: "export_id") var export: ExportRecord
    @Parent(key: "patient_id") var patient: UserRecord
    @Field(key: "pseudonym") var pseudonym: String

    /// Listed here so Fluent need not find them by reflection on every row (PropertyListTests keeps it whole).
    var properties: [any AnyProperty] { [$id, $export, $patient, $pseudonym] }

    init() {}

    package init(exportID: UUID, patientID: UUID, pseudonym: String) {
        self.$export.id = exportID
        self.$patient.id = patientID
        self.pseudonym = pseudonym
    }
}

/// A zone a patient set, from the moment it was set: the export writes local times in the zone then in force.
final class TimeZoneChangeRecord: Model, @unchecked Sendable {
    static let schema = "time_zone_changes"

    @ID(key: .id) var id: UUID?
    @Parent(key: "user_id") var user: UserRecord
    @Field(key: "time_zone") var timeZone: String
    @Field(key: "since") var since: Date

    /// Listed here so Fluent need not find them by reflection on every row (PropertyListTests keeps it whole).
    var properties: [any AnyProperty] { [$id, $user, $timeZone, $since] }

    init() {}

    package init(userID: UUID, timeZone: String, since: Date) {
        self.$user.id = userID
        self.timeZone = timeZone
        self.since = since
    }
}
