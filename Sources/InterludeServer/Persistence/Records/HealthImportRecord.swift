import Fluent
import Foundation
import InterludeCore

/// A file a person uploads to import samples from (an Apple Health export, a CSV): received in parts, then read
/// in the background; what came of it is kept, the file itself removed once read.
package final class HealthImportRecord: Model, @unchecked Sendable {
    package static let schema = "health_imports"

    package enum Format: String, Codable, Sendable {
        case appleHealthZip
        case appleHealthXML
        case csv
    }

    package enum Status: String, Codable, Sendable {
        /// More parts are to come.
        case receiving
        /// Complete, waiting to be read.
        case waiting
        case reading
        case done
        case failed
    }

    // managed
    @ID(custom: .id, generatedBy: .user) package var id: UUID?
    @Field(key: "created_at") var createdAt: Date
    @Field(key: "updated_at") var updatedAt: Date

    // references
    @Parent(key: "patient_id") var patient: UserRecord

    // data
    @Field(key: "format") var format: Format
    @Field(key: "status") package var status: Status
    /// The whole file's size, when the upload announced it.
    @OptionalField(key: "size") package var size: Int?
    @Field(key: "received") package var received: Int
    @Field(key: "read") var read: Int
    @Field(key: "stored") var stored: Int
    @Field(key: "duplicates") var duplicates: Int
    @Field(key: "skipped_not_enabled") var skippedNotEnabled: Int
    @Field(key: "skipped_outside_window") var skippedOutsideWindow: Int
    @Field(key: "skipped_invalid") var skippedInvalid: Int
    @Field(key: "skipped_other_types") var skippedOtherTypes: Int
    @OptionalField(key: "problem") package var problem: String?
    @OptionalField(key: "finished_at") var finishedAt: Date?
    /// The run reading it, and until when it holds it without reporting.
    @OptionalField(key: "claimed_by") var claimedBy: UUID?
    @OptionalField(key: "claimed_until") var claimedUntil: Date?
    /// Batches of the file read and counted so far: a run taking it over skips them.
    @Field(key: "batches") var batches: Int

    /// Listed here so Fluent need not find them by reflection on every row (PropertyListTests keeps it whole).
    package var properties: [any AnyProperty] {
        [
            $id, $createdAt, $updatedAt, $patient, $format, $status, $size, $received, $read, $stored, $duplicates,
            $skippedNotEnabled, $skippedOutsideWindow, $skippedInvalid, $skippedOtherTypes, $problem, $finishedAt,
            $claimedBy, $claimedUntil, $batches,
        ]
    }

    package init() {}

    package init(id: UUID, patientID: UUID, format: Format, size: Int?, now: Date) {
        self.id = id
        self.$patient.id = patientID
        self.format = format
        self.status = .receiving
        self.size = size
        self.received = 0
        self.read = 0
        self.stored = 0
        self.duplicates = 0
        self.skippedNotEnabled = 0
        self.skippedOutsideWindow = 0
        self.skippedInvalid = 0
        self.skippedOtherTypes = 0
        self.batches = 0
        self.createdAt = now
        self.updatedAt = now
    }
}
