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

    /// Listed here so Fluent need not find them by reflection on every row (PropertyListTests keeps it whole).
    var properties: [any AnyProperty] { [$id, $study, $instrumentKey, $version, $pinnedAt] }

    init() {}
}
