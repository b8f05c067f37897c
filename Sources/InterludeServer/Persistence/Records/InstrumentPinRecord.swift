import Fluent
import Foundation

/// The version of an instrument a study uses: pinned at its first use, moved only by the study's staff, so a new
/// version published elsewhere never changes what the study's participants answer.
final class InstrumentPinRecord: Model, @unchecked Sendable {
    static let schema = "instrument_pins"

    @ID(key: .id) var id: UUID?
    @Parent(key: "study_id") var study: StudyRecord
    @Field(key: "instrument_key") var instrumentKey: String
    @Field(key: "version") var version: Int
    @Field(key: "pinned_at") var pinnedAt: Date

    init() {}
}
