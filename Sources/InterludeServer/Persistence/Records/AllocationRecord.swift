import Fluent
import Foundation
import InterludeCore

/// One entry of a study's allocation log: a participant's arm as the study's design drew it when they joined, or
/// a correction a researcher made later with a reason. Append-only: an entry is never changed, and a person's
/// erasure leaves it in the log under the erasure's tombstone, so the sequence the design follows stays whole.
final class AllocationRecord: Model, @unchecked Sendable {
    static let schema = "allocations"

    // managed
    @ID(key: .id) var id: UUID?
    @Field(key: "created_at") var createdAt: Date

    // references
    @Parent(key: "study_id") var study: StudyRecord
    /// The participant; after their erasure, the erasure's tombstone.
    @Field(key: "participant_id") var participantID: UUID
    /// Who corrected the allocation; nil for one drawn at joining.
    @OptionalField(key: "recorded_by") var recordedBy: UUID?

    // data
    /// 1, 2, 3… over the study's log; unique in the study, so two joins at once cannot take the same place.
    @Field(key: "sequence") var sequence: Int
    @Field(key: "kind") var kind: AllocationEntry.Kind
    @Field(key: "arm") var arm: String
    @Field(key: "method") var method: AllocationMethodKind
    @Field(key: "stratum") var stratum: String
    /// The participant's level of each of the design's factors, as JSON.
    @Field(key: "levels") var levels: String
    @Field(key: "site") var site: String
    @OptionalField(key: "slot") var slot: Int?
    @OptionalField(key: "block") var block: Int?
    @OptionalField(key: "cycle") var cycle: Int?
    @OptionalField(key: "probability") var probability: Double?
    /// Why a correction was made.
    @OptionalField(key: "reason") var reason: String?

    /// Listed here so Fluent need not find them by reflection on every row (PropertyListTests keeps it whole).
    var properties: [any AnyProperty] {
        [
            $id, $createdAt, $study, $participantID, $recordedBy, $sequence, $kind, $arm, $method, $stratum, $levels,
            $site, $slot, $block, $cycle, $probability, $reason,
        ]
    }

    init() {}

    init(_ entry: AllocationEntry, studyID: UUID, participantID: UUID, recordedBy: UUID?, reason: String?, now: Date) {
        self.createdAt = now
        self.$study.id = studyID
        self.participantID = participantID
        self.recordedBy = recordedBy
        self.sequence = entry.sequence
        self.kind = entry.kind
        self.arm = entry.arm
        self.method = entry.method
        self.stratum = entry.stratum
        self.levels = String(decoding: (try? JSONEncoder().encode(entry.levels)) ?? Data("{}".utf8), as: UTF8.self)
        self.site = entry.site
        self.slot = entry.slot
        self.block = entry.block
        self.cycle = entry.cycle
        self.probability = entry.probability
        self.reason = reason
    }

    /// The entry as the design reads it.
    var entry: AllocationEntry {
        AllocationEntry(
            sequence: sequence, kind: kind, participant: participantID.lowercasedText, arm: arm, method: method,
            stratum: stratum,
            levels: (try? JSONDecoder().decode([String: String].self, from: Data(levels.utf8))) ?? [:],
            site: site, slot: slot, block: block, cycle: cycle, probability: probability)
    }
}
