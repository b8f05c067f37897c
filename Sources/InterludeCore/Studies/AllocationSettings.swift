import Foundation

/// How a study with arms assigns a new participant to one: the method a researcher picks in the study form.
public enum ArmAllocation: String, Codable, Sendable, CaseIterable {
    /// In turn: the next participant joins the arm after the previous one's.
    case alternating
    case random
    case permutedBlocks
    case minimisation
    /// Seed 000's clinic comparison: cycles of days or of admissions alternate between the arms.
    case sequentialCycles

    /// The method's kind as the allocation log names it.
    public var methodKind: AllocationMethodKind {
        self == .alternating ? .inTurn : AllocationMethodKind(rawValue: rawValue) ?? .random
    }
}

/// What a participant's stratum is made of: facts they gave when they registered.
public enum AllocationFactor: String, Codable, Sendable, CaseIterable {
    case gender
    /// Under 30, 30 to 49, 50 and over, on the day of joining.
    case ageGroup

    /// The level of this factor for a person, or `unknown` when they did not say.
    public func level(gender: String?, dateOfBirth: LocalDate?, on day: LocalDate) -> String {
        switch self {
        case .gender: return gender.flatMap(Gender.init(rawValue:))?.rawValue ?? "unknown"
        case .ageGroup:
            guard let born = dateOfBirth else { return "unknown" }
            let age = day.year - born.year - ((day.month, day.day) < (born.month, born.day) ? 1 : 0)
            return age < 30 ? "under30" : age < 50 ? "30to49" : "50plus"
        }
    }
}

/// The settings of a study's allocation beside its arms and method: each arm's share and target, the block sizes,
/// the factors, minimisation's chance of the preferred arm, and the cycles. Everything but the seed, which never
/// leaves the server while the study runs.
public struct AllocationSettings: Codable, Sendable, Equatable {
    /// Each arm's share, in the order of the arms; empty: one each.
    public var ratios: [Int]
    /// How many participants each arm needs, in the order of the arms (0: no limit); empty: no limits.
    public var targets: [Int]
    /// Whether each arm is a control arm (outcome questionnaires only), in the order of the arms; empty: none.
    public var control: [Bool]
    /// Permuted blocks: the multiples of the shares a block may hold, one drawn per block.
    public var blockMultiples: [Int]
    public var factors: [AllocationFactor]
    /// Minimisation: the chance of the arm that leaves the factors least out of balance.
    public var preferred: Double
    /// Sequential cycles: cycles of this many days from `cycleStart`…
    public var cycleDays: Int?
    public var cycleStart: LocalDate?
    /// …or of this many admissions of a site.
    public var cycleAdmissions: Int?
    /// Sequential cycles: each site's first arm drawn rather than the first.
    public var drawnStart: Bool

    public init(
        ratios: [Int] = [], targets: [Int] = [], control: [Bool] = [], blockMultiples: [Int] = [1, 2],
        factors: [AllocationFactor] = [],
        preferred: Double = 0.8, cycleDays: Int? = nil, cycleStart: LocalDate? = nil, cycleAdmissions: Int? = nil,
        drawnStart: Bool = false
    ) {
        self.ratios = ratios
        self.targets = targets
        self.control = control
        self.blockMultiples = blockMultiples
        self.factors = factors
        self.preferred = preferred
        self.cycleDays = cycleDays
        self.cycleStart = cycleStart
        self.cycleAdmissions = cycleAdmissions
        self.drawnStart = drawnStart
    }

    /// The settings a design was made from.
    public init(_ design: AllocationDesign) {
        self.init(
            ratios: design.arms.map(\.ratio), targets: design.arms.map { $0.target ?? 0 },
            control: design.arms.contains(where: \.control) ? design.arms.map(\.control) : [],
            factors: design.factors.compactMap(AllocationFactor.init(rawValue:)))
        switch design.method {
        case .inTurn, .random: break
        case .permutedBlocks(let multiples): blockMultiples = multiples
        case .minimisation(let preferred): self.preferred = preferred
        case .sequentialCycles(.period(let days, let from), let drawn):
            (cycleDays, cycleStart, drawnStart) = (days, from, drawn)
        case .sequentialCycles(.admissions(let count), let drawn): (cycleAdmissions, drawnStart) = (count, drawn)
        }
    }

    /// Each value within its range, whatever the method and arms: the problems name the settings' fields.
    public func problems() -> [FieldError] {
        var validator = FieldValidator()
        let field = "allocationSettings."
        let most = StudyDraft.armsMaxCount
        if ratios.count > most || ratios.contains(where: { !AllocationDesign.ratioRange.contains($0) }) {
            validator.add(field + "ratios", .outOfRange, limit: AllocationDesign.ratioRange.upperBound)
        }
        if targets.count > most
            || targets.contains(where: { !(0...AllocationDesign.targetRange.upperBound).contains($0) })
        {
            validator.add(field + "targets", .outOfRange, limit: AllocationDesign.targetRange.upperBound)
        }
        if control.count > most { validator.add(field + "control", .tooLong, limit: most) }
        if blockMultiples.isEmpty || blockMultiples.count > most
            || blockMultiples.contains(where: { !AllocationDesign.multiplesRange.contains($0) })
        {
            validator.add(field + "blockMultiples", .outOfRange, limit: AllocationDesign.multiplesRange.upperBound)
        }
        if Set(factors).count != factors.count { validator.add(field + "factors", .duplicate) }
        if !AllocationDesign.preferredRange.contains(preferred) { validator.add(field + "preferred", .outOfRange) }
        for (name, value) in [("cycleDays", cycleDays), ("cycleAdmissions", cycleAdmissions)] {
            if let value, !AllocationDesign.cycleRange.contains(value) {
                validator.add(field + name, .outOfRange, limit: AllocationDesign.cycleRange.upperBound)
            }
        }
        return validator.errors
    }

    /// The design these settings make for `arms` with `allocation`, drawing from `seed`; the problems name the
    /// settings' fields (`allocationSettings.ratios`). Cycles of days without a start begin on `today`.
    public func design(arms: [String], allocation: ArmAllocation, seed: UInt64, today: LocalDate)
        -> (design: AllocationDesign, problems: [FieldError])
    {
        var validator = FieldValidator()
        let field = "allocationSettings."
        if !ratios.isEmpty, ratios.count != arms.count { validator.add(field + "ratios", .invalidValue) }
        if !targets.isEmpty, targets.count != arms.count { validator.add(field + "targets", .invalidValue) }
        if !control.isEmpty, control.count != arms.count { validator.add(field + "control", .invalidValue) }
        if targets.contains(where: { $0 < 0 }) { validator.add(field + "targets", .outOfRange) }
        let method: AllocationMethod
        switch allocation {
        case .alternating: method = .inTurn
        case .random: method = .random
        case .permutedBlocks: method = .permutedBlocks(multiples: blockMultiples)
        case .minimisation: method = .minimisation(preferred: preferred)
        case .sequentialCycles:
            switch (cycleDays, cycleAdmissions) {
            case (let days?, nil):
                method = .sequentialCycles(.period(days: days, from: cycleStart ?? today), drawnStart: drawnStart)
            case (nil, let count?): method = .sequentialCycles(.admissions(count), drawnStart: drawnStart)
            default:
                validator.add(
                    field + (cycleDays == nil ? "cycleDays" : "cycleAdmissions"),
                    cycleDays == nil ? .required : .exclusive)
                method = .sequentialCycles(.admissions(1), drawnStart: drawnStart)
            }
        }
        let design = AllocationDesign(
            arms: arms.enumerated().map { index, name in
                AllocationArm(
                    name, ratio: ratios.indices.contains(index) ? ratios[index] : 1,
                    target: targets.indices.contains(index) && targets[index] > 0 ? targets[index] : nil,
                    control: control.indices.contains(index) && control[index])
            },
            method: method, factors: factors.map(\.rawValue), seed: seed)
        let names = [
            "arms.ratio": "ratios", "arms.target": "targets", "multiples": "blockMultiples", "preferred": "preferred",
            "factors": "factors", "cycle": cycleDays != nil ? "cycleDays" : "cycleAdmissions",
        ]
        for problem in design.problems() where problem.field != "arms" {
            validator.add(field + (names[problem.field] ?? problem.field), problem.code, limit: problem.limit)
        }
        let ranges = problems()
        return (design, ranges + validator.errors.filter { problem in !ranges.contains { $0.field == problem.field } })
    }
}
