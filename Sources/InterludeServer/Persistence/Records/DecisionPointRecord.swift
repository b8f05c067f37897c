import Fluent
import Foundation

/// A study's micro-randomised decision points (a `DecisionPointPlan` as JSON), at most one per study, with the seed
/// every point's draw comes from. Replacing the plan keeps the seed.
final class DecisionPlanRecord: Model, @unchecked Sendable {
    static let schema = "decision_plans"

    @ID(key: .id) var id: UUID?
    @Field(key: "created_at") var createdAt: Date
    @Field(key: "updated_at") var updatedAt: Date
    @Parent(key: "study_id") var study: StudyRecord
    @Field(key: "definition") var definition: String
    /// The seed of every point's draw, as a signed 64-bit number (the bits of the unsigned seed).
    @Field(key: "seed") var seed: Int64

    /// Listed here so Fluent need not find them by reflection on every row (PropertyListTests keeps it whole).
    var properties: [any AnyProperty] { [$id, $createdAt, $updatedAt, $study, $definition, $seed] }

    init() {}

    init(studyID: UUID, definition: String, seed: UInt64, now: Date) {
        self.$study.id = studyID
        self.definition = definition
        self.seed = Int64(bitPattern: seed)
        self.createdAt = now
        self.updatedAt = now
    }
}

/// One decision point of one participant, as it was decided: available or not, the chance, the assignment, the
/// option delivered and when the outcome window ends. Written once, never changed; the log the export gives.
final class DecisionPointRecord: Model, @unchecked Sendable {
    static let schema = "decision_points"

    // managed
    @ID(key: .id) var id: UUID?
    @Field(key: "created_at") var createdAt: Date

    // references
    @Parent(key: "study_id") var study: StudyRecord
    @Parent(key: "patient_id") var patient: UserRecord
    /// What the point delivered, when it was assigned and acted on in time.
    @OptionalField(key: "intervention_id") var interventionID: UUID?
    @OptionalField(key: "prompt_id") var promptID: UUID?

    // data
    /// The point's local day and time, e.g. `2026-03-02#10:00`; unique per participant in the study.
    @Field(key: "point") var point: String
    @Field(key: "at") var at: Date
    @Field(key: "time_zone") var timeZone: String
    @Field(key: "available") var available: Bool
    @OptionalField(key: "probability") var probability: Double?
    @OptionalField(key: "assigned") var assigned: Bool?
    /// The option of the plan's pool, counted from 0.
    @OptionalField(key: "option") var option: Int?
    @Field(key: "outcome_ends") var outcomeEnds: Date

    /// Listed here so Fluent need not find them by reflection on every row (PropertyListTests keeps it whole).
    var properties: [any AnyProperty] {
        [
            $id, $createdAt, $study, $patient, $interventionID, $promptID, $point, $at, $timeZone, $available,
            $probability, $assigned, $option, $outcomeEnds,
        ]
    }

    init() {}
}
