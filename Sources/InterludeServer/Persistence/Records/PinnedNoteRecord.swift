import Fluent
import Foundation

/// A note a therapist pins to a day of their client's chart (a holiday, a new medication), shown on the charts
/// of both: the therapist's session report and the client's own results.
final class PinnedNoteRecord: Model, @unchecked Sendable {
    static let schema = "pinned_notes"

    // managed
    @ID(key: .id) var id: UUID?
    @Field(key: "created_at") var createdAt: Date

    // references
    @Parent(key: "patient_id") var patient: UserRecord
    /// The practice the note belongs to.
    @Parent(key: "study_id") var study: StudyRecord
    @Parent(key: "author_id") var author: UserRecord

    // data
    /// The day, `YYYY-MM-DD` in the client's time zone.
    @Field(key: "day") var day: String
    /// Sealed.
    @Field(key: "text") var text: String

    /// Listed here so Fluent need not find them by reflection on every row (PropertyListTests keeps it whole).
    var properties: [any AnyProperty] { [$id, $createdAt, $patient, $study, $author, $day, $text] }

    init() {}

    init(id: UUID, patientID: UUID, studyID: UUID, authorID: UUID, day: String, sealedText: String, now: Date) {
        self.id = id
        self.$patient.id = patientID
        self.$study.id = studyID
        self.$author.id = authorID
        self.day = day
        self.text = sealedText
        self.createdAt = now
    }
}
