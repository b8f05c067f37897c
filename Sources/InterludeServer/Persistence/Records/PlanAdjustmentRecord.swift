import Fluent
import Foundation

/// A participant's own times for an adjustable plan.
final class PlanAdjustmentRecord: Model, @unchecked Sendable {
    static let schema = "plan_adjustments"

    // managed
    @ID(key: .id) var id: UUID?
    @Field(key: "updated_at") var updatedAt: Date

    // references
    @Parent(key: "plan_id") var plan: PlanRecord
    @Parent(key: "patient_id") var patient: UserRecord

    // data
    @Field(key: "adjustment") var adjustment: String

    /// Listed here so Fluent need not find them by reflection on every row (PropertyListTests keeps it whole).
    var properties: [any AnyProperty] { [$id, $updatedAt, $plan, $patient, $adjustment] }

    init() {}

    init(planID: UUID, patientID: UUID, adjustment: String, now: Date) {
        self.$plan.id = planID
        self.$patient.id = patientID
        self.adjustment = adjustment
        self.updatedAt = now
    }
}
