import Fluent
import Foundation
import InterludeCore

/// One measurement a person's phone, watch or import sent: typed columns, so a day's values add up in the
/// database; unique per person by the source's own id, so a re-upload changes nothing.
package final class SampleRecord: Model, @unchecked Sendable {
    package static let schema = "samples"

    // managed
    @ID(custom: .id, generatedBy: .user) package var id: UUID?
    @Field(key: "created_at") var createdAt: Date

    // references
    @Parent(key: "patient_id") var patient: UserRecord

    // data
    @Field(key: "type") var type: SampleType
    /// In the type's canonical unit.
    @Field(key: "value") var value: Double
    @Field(key: "start_at") var start: Date
    @Field(key: "end_at") var end: Date
    @Field(key: "source_id") var sourceID: String
    @OptionalField(key: "source_app") var sourceApp: String?
    @OptionalField(key: "device_name") var deviceName: String?
    @OptionalField(key: "device_model") var deviceModel: String?
    @OptionalField(key: "os_version") var osVersion: String?
    @OptionalField(key: "motion_context") var motionContext: Int?

    /// Listed here so Fluent need not find them by reflection on every row (PropertyListTests keeps it whole).
    package var properties: [any AnyProperty] {
        [
            $id, $createdAt, $patient, $type, $value, $start, $end, $sourceID, $sourceApp, $deviceName, $deviceModel,
            $osVersion, $motionContext,
        ]
    }

    package init() {}

    /// The columns a batch insert fills, in the order of `row`.
    package static let columns = [
        "id", "created_at", "patient_id", "type", "value", "start_at", "end_at", "source_id", "source_app",
        "device_name",
        "device_model", "os_version", "motion_context",
    ]

    var sample: Sample {
        Sample(
            type: type, value: value, start: start, end: end, sourceID: sourceID,
            source: .init(app: sourceApp, deviceName: deviceName, deviceModel: deviceModel, osVersion: osVersion),
            motionContext: motionContext.flatMap(Sample.MotionContext.init(rawValue:)))
    }
}

/// Whether a person lets their samples of one type be collected; a type without a row is not collected.
final class SampleChoiceRecord: Model, @unchecked Sendable {
    static let schema = "sample_choices"

    @ID(custom: .id, generatedBy: .user) var id: UUID?
    @Parent(key: "patient_id") var patient: UserRecord
    @Field(key: "type") var type: SampleType
    @Field(key: "enabled") var enabled: Bool
    @Field(key: "changed_at") var changedAt: Date

    /// Listed here so Fluent need not find them by reflection on every row (PropertyListTests keeps it whole).
    var properties: [any AnyProperty] { [$id, $patient, $type, $enabled, $changedAt] }

    init() {}

    init(patientID: UUID, type: SampleType, enabled: Bool, now: Date) {
        self.id = UUID()
        self.$patient.id = patientID
        self.type = type
        self.enabled = enabled
        self.changedAt = now
    }
}
