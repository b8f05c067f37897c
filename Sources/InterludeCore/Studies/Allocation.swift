import Foundation

/// How a study divides its participants between arms: the arms with their shares and targets, the method, the
/// factors the method balances, and the seed every random choice is drawn from. With the log of earlier
/// allocations, the design fixes the next one; kept on the server only, so nobody can tell it in advance.
public struct AllocationDesign: Codable, Sendable, Equatable {
    public var arms: [AllocationArm]
    public var method: AllocationMethod
    /// Factors (a site, a gender, a band of a baseline score) whose levels make the strata of permuted blocks and
    /// which minimisation balances. None: one stratum.
    public var factors: [String]
    public var seed: UInt64

    public init(arms: [AllocationArm], method: AllocationMethod, factors: [String] = [], seed: UInt64) {
        self.arms = arms
        self.method = method
        self.factors = factors
        self.seed = seed
    }

    public static let ratioRange = 1...10
    public static let multiplesRange = 1...10
    public static let targetRange = 1...100_000
    public static let factorsMaxCount = 5
    public static let preferredRange = 0.5...1.0
    public static let cycleRange = 1...365

    /// Every problem of the design, named by its field.
    public func problems() -> [FieldError] {
        var validator = FieldValidator()
        if arms.count < 2 { validator.add("arms", .tooShort, limit: 2) }
        if arms.count > StudyDraft.armsMaxCount { validator.add("arms", .tooLong, limit: StudyDraft.armsMaxCount) }
        if Set(arms.map(\.name)).count != arms.count { validator.add("arms", .duplicate) }
        if arms.contains(where: { !Self.ratioRange.contains($0.ratio) }) {
            validator.add("arms.ratio", .outOfRange, limit: Self.ratioRange.upperBound)
        }
        if arms.contains(where: { $0.target.map { !Self.targetRange.contains($0) } ?? false }) {
            validator.add("arms.target", .outOfRange, limit: Self.targetRange.upperBound)
        }
        if factors.count > Self.factorsMaxCount { validator.add("factors", .tooLong, limit: Self.factorsMaxCount) }
        if Set(factors).count != factors.count { validator.add("factors", .duplicate) }
        switch method {
        case .inTurn, .random: break
        case .permutedBlocks(let multiples):
            if multiples.isEmpty || multiples.contains(where: { !Self.multiplesRange.contains($0) }) {
                validator.add("multiples", .outOfRange, limit: Self.multiplesRange.upperBound)
            }
        case .minimisation(let preferred):
            if !Self.preferredRange.contains(preferred) { validator.add("preferred", .outOfRange) }
            if factors.isEmpty { validator.add("factors", .required) }
        case .sequentialCycles(let cycle, _):
            let length =
                switch cycle {
                case .period(let days, _): days
                case .admissions(let count): count
                }
            if !Self.cycleRange.contains(length) {
                validator.add("cycle", .outOfRange, limit: Self.cycleRange.upperBound)
            }
        }
        return validator.errors
    }
}

/// One stratum of a study and its participants per arm.
public struct AllocationStratum: Sendable, Equatable {
    /// The stratum's level of each of the design's factors, in their order.
    public var levels: [String]
    public var arms: [String: Int]

    public init(levels: [String], arms: [String: Int]) {
        self.levels = levels
        self.arms = arms
    }
}

public struct AllocationArm: Codable, Sendable, Equatable {
    public var name: String
    /// The arm's share: an arm of ratio 2 receives twice as many participants as one of ratio 1.
    public var ratio: Int
    /// How many participants the arm needs; once it has them it takes nobody more. Nil: no limit.
    public var target: Int?
    /// A control arm: its participants answer the questionnaires planned for them and receive nothing else, no
    /// intervention, no rule's action and no message. The built-in alert for item 9 of the PHQ-9 still fires.
    public var control: Bool

    public init(_ name: String, ratio: Int = 1, target: Int? = nil, control: Bool = false) {
        self.name = name
        self.ratio = ratio
        self.target = target
        self.control = control
    }

    private enum CodingKeys: String, CodingKey {
        case name, ratio, target, control
    }

    /// Designs stored before arms could be control arms read as arms that receive everything.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        name = try container.decode(String.self, forKey: .name)
        ratio = try container.decode(Int.self, forKey: .ratio)
        target = try container.decodeIfPresent(Int.self, forKey: .target)
        control = try container.decodeIfPresent(Bool.self, forKey: .control) ?? false
    }
}

extension AllocationDesign {
    /// Whether `arm` is one of the design's control arms; nil (no arm) is not.
    public func isControl(_ arm: String?) -> Bool {
        arms.contains { $0.name == arm && $0.control }
    }
}

public enum AllocationMethod: Codable, Sendable, Equatable {
    /// Each participant the arm after the previous one's, shares taken into account.
    case inTurn
    /// Each participant drawn at random, weighted by the shares.
    case random
    /// Blocks holding each arm its share times a multiple drawn for each block, in a random order; one sequence of
    /// blocks per stratum.
    case permutedBlocks(multiples: [Int])
    /// Pocock–Simon: with probability `preferred` the arm that leaves the factors least out of balance (range of the
    /// share-weighted counts, summed over the factors), another open arm otherwise.
    case minimisation(preferred: Double)
    /// Seed 000's clinic comparison: the participants a site admits in one cycle share an arm, and the cycles
    /// alternate between the arms, from the first arm or from one drawn per site.
    case sequentialCycles(AllocationCycle, drawnStart: Bool)

    public var kind: AllocationMethodKind {
        switch self {
        case .inTurn: .inTurn
        case .random: .random
        case .permutedBlocks: .permutedBlocks
        case .minimisation: .minimisation
        case .sequentialCycles: .sequentialCycles
        }
    }
}

public enum AllocationMethodKind: String, Codable, Sendable, CaseIterable {
    case inTurn, random, permutedBlocks, minimisation, sequentialCycles
}

public enum AllocationCycle: Codable, Sendable, Equatable {
    /// Calendar periods of `days` days, the first starting on `from`.
    case period(days: Int, from: LocalDate)
    /// Each `count` consecutive admissions of one site.
    case admissions(Int)
}

/// Who is to be allocated: the participant's level of each factor, the site admitting them (a practice or a
/// therapist) and the day of admission.
public struct AllocationCandidate: Sendable, Equatable {
    public var participant: String
    public var levels: [String: String]
    public var site: String
    public var admittedOn: LocalDate

    public init(participant: String, levels: [String: String] = [:], site: String = "", admittedOn: LocalDate) {
        self.participant = participant
        self.levels = levels
        self.site = site
        self.admittedOn = admittedOn
    }
}

/// One entry of a study's allocation log: a drawn allocation, or a correction of an earlier one (which never
/// takes a place of the method's sequence).
public struct AllocationEntry: Codable, Sendable, Equatable {
    public enum Kind: String, Codable, Sendable {
        case drawn, corrected
    }

    /// 1, 2, 3… over the study's whole log.
    public var sequence: Int
    public var kind: Kind
    public var participant: String
    public var arm: String
    public var method: AllocationMethodKind
    /// The levels of the design's factors, `factor=level` joined by `|`; empty without factors.
    public var stratum: String
    public var levels: [String: String]
    public var site: String
    /// In turn and permuted blocks: the place taken in the stratum's sequence, from 0.
    public var slot: Int?
    /// Permuted blocks: the block of that place, from 0.
    public var block: Int?
    /// Sequential cycles: the site's cycle, from 0.
    public var cycle: Int?
    /// The chance the arm had when it was drawn (random and minimisation).
    public var probability: Double?

    public init(
        sequence: Int, kind: Kind, participant: String, arm: String, method: AllocationMethodKind, stratum: String,
        levels: [String: String], site: String, slot: Int? = nil, block: Int? = nil, cycle: Int? = nil,
        probability: Double? = nil
    ) {
        self.sequence = sequence
        self.kind = kind
        self.participant = participant
        self.arm = arm
        self.method = method
        self.stratum = stratum
        self.levels = levels
        self.site = site
        self.slot = slot
        self.block = block
        self.cycle = cycle
        self.probability = probability
    }
}

public enum AllocationOutcome: Sendable, Equatable {
    case allocated(AllocationEntry)
    /// Every arm has reached its target: the study takes nobody more.
    case full
}

extension AllocationDesign {
    /// The next participant's allocation after `log` (in sequence order). Arms that have reached their target are
    /// passed over; the same design and log always give the same allocation.
    public func allocate(_ candidate: AllocationCandidate, after log: [AllocationEntry]) -> AllocationOutcome {
        let current = Self.currentArms(log)
        let open = openArms(current)
        guard !open.isEmpty else { return .full }
        let openNames = Set(open.map(\.name))
        let levels = Dictionary(uniqueKeysWithValues: factors.map { ($0, candidate.levels[$0] ?? "") })
        var entry = AllocationEntry(
            sequence: (log.last?.sequence ?? 0) + 1, kind: .drawn, participant: candidate.participant, arm: "",
            method: method.kind, stratum: Self.stratum(levels), levels: levels, site: candidate.site)
        let drawn = log.filter { $0.kind == .drawn }
        switch method {
        case .inTurn:
            let wheel = arms.flatMap { Array(repeating: $0.name, count: $0.ratio) }
            var slot = drawn.last?.slot.map { $0 + 1 } ?? 0
            while !openNames.contains(wheel[slot % wheel.count]) { slot += 1 }
            entry.arm = wheel[slot % wheel.count]
            entry.slot = slot
        case .random:
            var generator = SeededRandom(seed: seed, for: "draw \(entry.sequence)")
            (entry.arm, entry.probability) = Self.weighted(open, using: &generator)
        case .permutedBlocks(let multiples):
            var slot = drawn.last(where: { $0.stratum == entry.stratum })?.slot.map { $0 + 1 } ?? 0
            while true {
                let (block, arm) = blockSlot(slot, stratum: entry.stratum, multiples: multiples)
                if openNames.contains(arm) {
                    (entry.arm, entry.slot, entry.block) = (arm, slot, block)
                    break
                }
                slot += 1
            }
        case .minimisation(let preferred):
            var generator = SeededRandom(seed: seed, for: "draw \(entry.sequence)")
            (entry.arm, entry.probability) = minimised(
                levels, open: open, log: log, current: current, preferred: preferred, using: &generator)
        case .sequentialCycles(let cycle, let drawnStart):
            let index =
                switch cycle {
                case .period(let days, let from):
                    max(0, candidate.admittedOn.daysSinceEpoch - from.daysSinceEpoch) / days
                case .admissions(let count): drawn.filter { $0.site == candidate.site }.count / count
                }
            var generator = SeededRandom(seed: seed, for: "site \(candidate.site)")
            let start = drawnStart ? generator.index(arms.count) : 0
            let order = (0..<arms.count).map { arms[(index + start + $0) % arms.count] }
            entry.arm = order.first { openNames.contains($0.name) }!.name
            entry.cycle = index
        }
        return .allocated(entry)
    }

    /// Whether every arm has reached its target, so the study takes nobody more.
    public func isFull(after log: [AllocationEntry]) -> Bool { openArms(Self.currentArms(log)).isEmpty }

    /// The arms below their target, given each participant's arm now.
    private func openArms(_ current: [String: String]) -> [AllocationArm] {
        var counts: [String: Int] = [:]
        for arm in current.values { counts[arm, default: 0] += 1 }
        return arms.filter { arm in arm.target.map { counts[arm.name, default: 0] < $0 } ?? true }
    }

    /// Each participant's arm now: the last entry naming them.
    public static func currentArms(_ log: [AllocationEntry]) -> [String: String] {
        var current: [String: String] = [:]
        for entry in log { current[entry.participant] = entry.arm }
        return current
    }

    /// How many participants each stratum has in each arm now (after corrections), the strata in the order their
    /// first participant was allocated; a stratum is its level of each of `factors`, `unknown` where an entry has
    /// none (an erased participant's).
    public static func strata(_ log: [AllocationEntry], factors: [String]) -> [AllocationStratum] {
        var latest: [String: AllocationEntry] = [:]
        var order: [String] = []
        for entry in log {
            if latest[entry.participant] == nil { order.append(entry.participant) }
            latest[entry.participant] = entry
        }
        var strata: [AllocationStratum] = []
        for participant in order {
            guard let entry = latest[participant] else { continue }
            let levels = factors.map { entry.levels[$0] ?? "unknown" }
            if let index = strata.firstIndex(where: { $0.levels == levels }) {
                strata[index].arms[entry.arm, default: 0] += 1
            } else {
                strata.append(AllocationStratum(levels: levels, arms: [entry.arm: 1]))
            }
        }
        return strata
    }

    /// The block holding `slot` of a stratum's sequence, and the arm at that place. Every block is drawn from a
    /// generator of its own (the seed, the stratum and the block's number), so no block follows from the ones before.
    public func blockSlot(_ slot: Int, stratum: String, multiples: [Int]) -> (block: Int, arm: String) {
        let share = arms.reduce(0) { $0 + $1.ratio }
        var block = 0
        var start = 0
        while true {
            var generator = SeededRandom(seed: seed, for: "block \(block) of \(stratum)")
            let multiple = multiples[generator.index(multiples.count)]
            let size = share * multiple
            if slot < start + size {
                var order = arms.flatMap { Array(repeating: $0.name, count: $0.ratio * multiple) }
                for index in stride(from: order.count - 1, to: 0, by: -1) {
                    order.swapAt(index, generator.index(index + 1))
                }
                return (block, order[slot - start])
            }
            start += size
            block += 1
        }
    }

    private func minimised(
        _ levels: [String: String], open: [AllocationArm], log: [AllocationEntry], current: [String: String],
        preferred: Double, using generator: inout SeededRandom
    ) -> (String, Double) {
        var latest: [String: AllocationEntry] = [:]
        for entry in log where entry.kind == .drawn { latest[entry.participant] = entry }
        let imbalance = open.map { candidate in
            factors.reduce(0.0) { sum, factor in
                let weighted = arms.map { arm in
                    let same = current.filter { participant, name in
                        name == arm.name && latest[participant]?.levels[factor] == levels[factor]
                    }.count
                    return Double(same + (arm.name == candidate.name ? 1 : 0)) / Double(arm.ratio)
                }
                return sum + (weighted.max()! - weighted.min()!)
            }
        }
        let best = imbalance.min()!
        let favoured = open.indices.filter { imbalance[$0] == best }
        let others = open.indices.filter { imbalance[$0] != best }
        if others.isEmpty || generator.chance(preferred) {
            let chance = others.isEmpty ? 1.0 / Double(favoured.count) : preferred / Double(favoured.count)
            return (open[favoured[generator.index(favoured.count)]].name, chance)
        }
        return (open[others[generator.index(others.count)]].name, (1 - preferred) / Double(others.count))
    }

    private static func weighted(_ open: [AllocationArm], using generator: inout SeededRandom) -> (String, Double) {
        let total = open.reduce(0) { $0 + $1.ratio }
        var point = generator.index(total)
        for arm in open {
            if point < arm.ratio { return (arm.name, Double(arm.ratio) / Double(total)) }
            point -= arm.ratio
        }
        return (open[open.count - 1].name, Double(open[open.count - 1].ratio) / Double(total))
    }

    static func stratum(_ levels: [String: String]) -> String {
        levels.keys.sorted().map { "\($0)=\(levels[$0]!)" }.joined(separator: "|")
    }
}

extension AllocationDesign {
    /// A correction of `participant`'s arm: the log's next entry, in the stratum and site of their earlier one. It
    /// takes no place of the method's sequence, so the allocations drawn after it go on as before.
    public func correction(of participant: String, to arm: String, after log: [AllocationEntry]) -> AllocationEntry {
        let earlier = log.last { $0.participant == participant }
        return AllocationEntry(
            sequence: (log.last?.sequence ?? 0) + 1, kind: .corrected, participant: participant, arm: arm,
            method: method.kind, stratum: earlier?.stratum ?? "", levels: earlier?.levels ?? [:],
            site: earlier?.site ?? "")
    }
}

/// A researcher's correction of one participant's arm, checked: one of the study's arms other than theirs now,
/// and the reason for it.
public struct AllocationCorrection: Sendable, Equatable {
    public static let reasonMaxLength = 500

    public let arm: String
    public let reason: String

    public static func validate(arm: String?, reason: String?, arms: [String], current: String?)
        throws(ValidationFailure) -> AllocationCorrection
    {
        var validator = FieldValidator()
        let cleanArm = validator.text(arm, field: "arm", maxLength: StudyDraft.armNameMaxLength)
        if let cleanArm, !arms.contains(cleanArm) {
            validator.add("arm", .unknown)
        } else if let cleanArm, cleanArm == current {
            validator.add("arm", .invalidValue)
        }
        let cleanReason = validator.text(reason, field: "reason", maxLength: reasonMaxLength, lines: .multiple)
        try validator.check()
        return AllocationCorrection(arm: cleanArm!, reason: cleanReason!)
    }
}
