import Foundation
import Testing

@testable import InterludeCore

@Suite("Allocation to arms")
struct AllocationTests {
    static let day0 = LocalDate(year: 2026, month: 1, day: 5)!

    /// Allocates the candidates one after the other, as the server does, and returns the log.
    static func run(_ design: AllocationDesign, _ candidates: [AllocationCandidate]) -> [AllocationEntry] {
        var log: [AllocationEntry] = []
        for candidate in candidates {
            guard case .allocated(let entry) = design.allocate(candidate, after: log) else { break }
            log.append(entry)
        }
        return log
    }

    static func people(
        _ count: Int, levels: (Int) -> [String: String] = { _ in [:] }, site: (Int) -> String = { _ in "" }
    )
        -> [AllocationCandidate]
    {
        (0..<count).map {
            AllocationCandidate(participant: "p\($0)", levels: levels($0), site: site($0), admittedOn: day0)
        }
    }

    static func counts(_ log: some Sequence<AllocationEntry>) -> [String: Int] {
        var counts: [String: Int] = [:]
        for entry in log { counts[entry.arm, default: 0] += 1 }
        return counts
    }

    @Test("in turn follows the shares: two of A for each of B")
    func inTurn() {
        let design = AllocationDesign(arms: [.init("A", ratio: 2), .init("B")], method: .inTurn, seed: 1)
        #expect(Self.run(design, Self.people(7)).map(\.arm) == ["A", "A", "B", "A", "A", "B", "A"])
    }

    @Test("permuted blocks are balanced at every block end, whatever sizes the blocks draw")
    func blocksBalanced() {
        let design = AllocationDesign(
            arms: [.init("A"), .init("B", ratio: 2)], method: .permutedBlocks(multiples: [1, 2, 3]), seed: 42)
        let log = Self.run(design, Self.people(600))
        var ends = 0
        var sizes: Set<Int> = []
        var blockStart = 0
        for (index, entry) in log.enumerated() {
            let next = design.blockSlot(entry.slot! + 1, stratum: entry.stratum, multiples: [1, 2, 3]).block
            guard next != entry.block else { continue }
            ends += 1
            sizes.insert(index + 1 - blockStart)
            blockStart = index + 1
            let counts = Self.counts(log[...index])
            #expect(counts["B", default: 0] == 2 * counts["A", default: 0], "after \(index + 1)")
        }
        #expect(ends > 60)
        #expect(sizes == [3, 6, 9])
    }

    @Test("no block's order follows from the ones before it")
    func blocksUnpredictable() {
        let design = AllocationDesign(arms: [.init("A"), .init("B")], method: .permutedBlocks(multiples: [2]), seed: 7)
        let blocks = (0..<400).map { block in
            (0..<4).map { design.blockSlot(block * 4 + $0, stratum: "", multiples: [2]).arm }.joined()
        }
        #expect(Set(blocks).count == 6)
        var followers: [String: Set<String>] = [:]
        for (previous, next) in zip(blocks, blocks.dropFirst()) { followers[previous, default: []].insert(next) }
        for (order, next) in followers {
            #expect(next.count == 6, "after \(order) only \(next.sorted())")
        }
        let other = AllocationDesign(arms: design.arms, method: design.method, seed: 8)
        let otherBlocks = (0..<400).map { block in
            (0..<4).map { other.blockSlot(block * 4 + $0, stratum: "", multiples: [2]).arm }.joined()
        }
        #expect(otherBlocks != blocks)
        let stratum = (0..<400).map { block in
            (0..<4).map { design.blockSlot(block * 4 + $0, stratum: "gender=f", multiples: [2]).arm }.joined()
        }
        #expect(stratum != blocks)
    }

    @Test("stratified blocks are balanced in every stratum at its block ends")
    func stratified() {
        let multiples = [1, 2]
        let design = AllocationDesign(
            arms: [.init("A"), .init("B")], method: .permutedBlocks(multiples: multiples), factors: ["gender", "site"],
            seed: 99)
        var random = SeededRandom(seed: 3)
        let levels = (0..<500).map { _ in
            ["gender": ["f", "m", "d"][random.index(3)], "site": ["north", "south"][random.index(2)]]
        }
        let log = Self.run(design, Self.people(500, levels: { levels[$0] }))
        #expect(Set(log.map(\.stratum)).count == 6)
        #expect(log.allSatisfy { $0.stratum == "gender=\($0.levels["gender"]!)|site=\($0.levels["site"]!)" })
        for entry in log {
            let next = design.blockSlot(entry.slot! + 1, stratum: entry.stratum, multiples: multiples).block
            guard next != entry.block else { continue }
            let counts = Self.counts(log.prefix(entry.sequence).filter { $0.stratum == entry.stratum })
            #expect(counts["A"] == counts["B"], "stratum \(entry.stratum) after \(entry.sequence)")
        }
    }

    @Test("minimisation, worked by hand: the arm that balances sex and site is favoured with the stated chance")
    func minimisation() {
        let arms: [AllocationArm] = [.init("A"), .init("B")]
        let earlier: [(String, String, String)] = [("A", "f", "1"), ("B", "f", "2"), ("A", "m", "1"), ("B", "m", "1")]
        let log = earlier.enumerated().map { index, row in
            AllocationEntry(
                sequence: index + 1, kind: .drawn, participant: "p\(index)", arm: row.0, method: .minimisation,
                stratum: "", levels: ["sex": row.1, "site": row.2], site: "")
        }
        // A newcomer with sex f at site 1. Into A: sex f 2:1 (range 1), site 1 3:1 (range 2), total 3.
        // Into B: sex f 1:2 (range 1), site 1 2:2 (range 0), total 1. So B, with probability 0.8.
        let candidate = AllocationCandidate(
            participant: "new", levels: ["sex": "f", "site": "1"], admittedOn: Self.day0)
        var chosen: [String: Int] = [:]
        for seed in 0..<2_000 {
            let design = AllocationDesign(
                arms: arms, method: .minimisation(preferred: 0.8), factors: ["sex", "site"], seed: UInt64(seed))
            guard case .allocated(let entry) = design.allocate(candidate, after: log) else {
                Issue.record("not allocated")
                return
            }
            chosen[entry.arm, default: 0] += 1
            #expect(abs(entry.probability! - (entry.arm == "B" ? 0.8 : 0.2)) < 1e-12)
        }
        // Binomial(2 000, 0.8): mean 1 600, standard deviation about 17.9; 99 % within ±46.
        #expect((1_554...1_646).contains(chosen["B", default: 0]))
        let always = AllocationDesign(
            arms: arms, method: .minimisation(preferred: 1), factors: ["sex", "site"], seed: 5)
        #expect(
            always.allocate(candidate, after: log)
                == .allocated(
                    AllocationEntry(
                        sequence: 5, kind: .drawn, participant: "new", arm: "B", method: .minimisation,
                        stratum: "sex=f|site=1",
                        levels: ["sex": "f", "site": "1"], site: "", probability: 1)))
    }

    @Test("minimisation keeps the factors' margins close over a whole study")
    func minimisationBalances() {
        let design = AllocationDesign(
            arms: [.init("A"), .init("B")], method: .minimisation(preferred: 0.8), factors: ["sex", "band"], seed: 11)
        var random = SeededRandom(seed: 12)
        let levels = (0..<200).map { _ in
            ["sex": ["f", "m"][random.index(2)], "band": ["low", "high"][random.index(2)]]
        }
        let log = Self.run(design, Self.people(200, levels: { levels[$0] }))
        for factor in ["sex", "band"] {
            for level in Set(levels.map { $0[factor]! }) {
                let counts = Self.counts(log.filter { $0.levels[factor] == level })
                #expect(abs(counts["A", default: 0] - counts["B", default: 0]) <= 4, "\(factor)=\(level): \(counts)")
            }
        }
    }

    @Test("sequential cycles switch arm at the end of each period and stop at the targets")
    func periods() {
        let design = AllocationDesign(
            arms: [.init("control", target: 3), .init("app", target: 4)],
            method: .sequentialCycles(.period(days: 28, from: Self.day0), drawnStart: false), seed: 1)
        let days = [0, 10, 27, 28, 40, 55, 56, 60, 84, 90, 100]
        let candidates = days.enumerated().map { index, day in
            AllocationCandidate(
                participant: "p\(index)", admittedOn: LocalDate(daysSinceEpoch: Self.day0.daysSinceEpoch + day))
        }
        var log: [AllocationEntry] = []
        var outcomes: [String] = []
        for candidate in candidates {
            switch design.allocate(candidate, after: log) {
            case .allocated(let entry):
                log.append(entry)
                outcomes.append("\(entry.arm)@\(entry.cycle!)")
            case .full: outcomes.append("full")
            }
        }
        // Days 0–27 cycle 0 (control), 28–55 cycle 1 (app), 56–83 cycle 2 (control, full after three: app instead),
        // 84– cycle 3 (app, full after four): the study is full.
        #expect(
            outcomes == [
                "control@0", "control@0", "control@0", "app@1", "app@1", "app@1", "app@2", "full", "full", "full",
                "full",
            ])
    }

    @Test("cycles of admissions count each site's admissions apart; a drawn start replays")
    func admissions() {
        let design = AllocationDesign(
            arms: [.init("A"), .init("B")], method: .sequentialCycles(.admissions(4), drawnStart: false), seed: 1)
        let sites = ["north", "north", "south", "north", "north", "north", "south", "north", "north"]
        let log = Self.run(design, Self.people(sites.count, site: { sites[$0] }))
        // North admits the 1st, 2nd, 4th, 5th and 6th: its fifth opens its second cycle; south admits two in its first.
        #expect(log.map(\.arm) == ["A", "A", "A", "A", "A", "B", "A", "B", "B"])
        #expect(log.map(\.cycle) == [0, 0, 0, 0, 0, 1, 0, 1, 1])
        let drawn = (0..<40).map { seed in
            AllocationDesign(
                arms: design.arms, method: .sequentialCycles(.admissions(4), drawnStart: true), seed: UInt64(seed))
        }
        let firsts = drawn.map { Self.run($0, Self.people(1, site: { _ in "north" }))[0].arm }
        #expect(Set(firsts) == ["A", "B"])
        #expect(drawn.map { Self.run($0, Self.people(1, site: { _ in "north" }))[0].arm } == firsts)
    }

    @Test("the same seed replays the same allocations; another seed does not")
    func replay() {
        var random = SeededRandom(seed: 21)
        let levels = (0..<120).map { _ in ["sex": ["f", "m"][random.index(2)]] }
        let methods: [AllocationMethod] = [.random, .permutedBlocks(multiples: [1, 2]), .minimisation(preferred: 0.7)]
        for method in methods {
            let design = AllocationDesign(
                arms: [.init("A"), .init("B"), .init("C")], method: method, factors: ["sex"], seed: 5)
            let candidates = Self.people(120, levels: { levels[$0] })
            #expect(Self.run(design, candidates) == Self.run(design, candidates))
            var other = design
            other.seed = 6
            #expect(Self.run(other, candidates).map(\.arm) != Self.run(design, candidates).map(\.arm))
        }
    }

    @Test("random allocation draws by the shares and logs each arm's chance")
    func random() {
        let design = AllocationDesign(arms: [.init("A", ratio: 3), .init("B")], method: .random, seed: 17)
        let log = Self.run(design, Self.people(2_000))
        // Binomial(2 000, 0.75): mean 1 500, standard deviation about 19.4; 99 % within ±50.
        #expect((1_450...1_550).contains(Self.counts(log)["A", default: 0]))
        #expect(log.allSatisfy { $0.probability == ($0.arm == "A" ? 0.75 : 0.25) })
    }

    @Test("each stratum's participants per arm, in the order the strata first appear, after corrections")
    func strata() {
        let design = AllocationDesign(
            arms: [.init("A"), .init("B")], method: .permutedBlocks(multiples: [1]), factors: ["gender"], seed: 8)
        let genders = ["female", "male", "female", "female", "male", "female"]
        var log = Self.run(design, Self.people(genders.count, levels: { ["gender": genders[$0]] }))
        let moved = log[0]
        log.append(
            AllocationEntry(
                sequence: log.count + 1, kind: .corrected, participant: moved.participant,
                arm: moved.arm == "A" ? "B" : "A", method: .permutedBlocks, stratum: moved.stratum,
                levels: moved.levels, site: moved.site))
        let strata = AllocationDesign.strata(log, factors: ["gender"])
        #expect(strata.map(\.levels) == [["female"], ["male"]])
        #expect(strata.map { $0.arms.values.reduce(0, +) } == [4, 2], "a correction moves, never adds, a participant")
        var female: [String: Int] = [:]
        for entry in log.dropLast() where entry.levels["gender"] == "female" {
            female[entry.participant == moved.participant ? log.last!.arm : entry.arm, default: 0] += 1
        }
        #expect(strata[0].arms == female)
        #expect(AllocationDesign.strata([], factors: ["gender"]).isEmpty)
        #expect(
            AllocationDesign.strata([log[1]], factors: ["gender", "ageGroup"]).map(\.levels) == [["male", "unknown"]])
    }

    @Test("a full arm is passed over, and a correction moves the participant without taking a place")
    func targetsAndCorrections() {
        let design = AllocationDesign(
            arms: [.init("A", target: 2), .init("B", target: 5)], method: .permutedBlocks(multiples: [2]), seed: 3)
        var log = Self.run(design, Self.people(4))
        #expect(Self.counts(log)["A"] == 2)
        let moved = log.first { $0.arm == "A" }!
        log.append(
            AllocationEntry(
                sequence: 5, kind: .corrected, participant: moved.participant, arm: "B", method: .permutedBlocks,
                stratum: moved.stratum, levels: moved.levels, site: moved.site))
        guard case .allocated(let next) = design.allocate(Self.people(5)[4], after: log) else {
            Issue.record("not allocated")
            return
        }
        #expect(
            next.sequence == 6 && next.slot == 4 && next.arm == design.blockSlot(4, stratum: "", multiples: [2]).arm)
        log.append(next)
        while case .allocated(let entry) = design.allocate(
            AllocationCandidate(participant: "q\(log.count)", admittedOn: Self.day0), after: log)
        {
            log.append(entry)
        }
        var arms: [String: Int] = [:]
        for arm in AllocationDesign.currentArms(log).values { arms[arm, default: 0] += 1 }
        #expect(arms == ["A": 2, "B": 5])
    }

    @Test("a design is checked at the door, each problem named by its field")
    func problems() {
        let good = AllocationDesign(
            arms: [.init("A"), .init("B")], method: .permutedBlocks(multiples: [1, 2]), seed: 1)
        #expect(good.problems().isEmpty)
        let fields = { (design: AllocationDesign) in Set(design.problems().map(\.field)) }
        #expect(fields(.init(arms: [.init("A")], method: .random, seed: 1)) == ["arms"])
        #expect(fields(.init(arms: [.init("A"), .init("A")], method: .random, seed: 1)) == ["arms"])
        #expect(
            fields(.init(arms: [.init("A", ratio: 0), .init("B", target: 0)], method: .random, seed: 1))
                == ["arms.ratio", "arms.target"])
        #expect(fields(.init(arms: good.arms, method: .permutedBlocks(multiples: []), seed: 1)) == ["multiples"])
        #expect(
            fields(.init(arms: good.arms, method: .minimisation(preferred: 0.3), seed: 1)) == ["preferred", "factors"])
        #expect(
            fields(.init(arms: good.arms, method: .sequentialCycles(.admissions(0), drawnStart: false), seed: 1))
                == ["cycle"])
    }

    @Test("a correction is the log's next entry and takes no place: the allocations drawn after it go on in turn")
    func correction() {
        let design = AllocationDesign(arms: [.init("A"), .init("B")], method: .inTurn, seed: 1)
        var log = Self.run(design, Self.people(2))
        let corrected = design.correction(of: "p0", to: "B", after: log)
        #expect(corrected.sequence == 3 && corrected.kind == .corrected && corrected.slot == nil)
        log.append(corrected)
        guard case .allocated(let next) = design.allocate(Self.people(3)[2], after: log) else {
            Issue.record("the design refused a third participant")
            return
        }
        #expect(next.arm == "A" && next.slot == 2 && next.sequence == 4)
        #expect(AllocationDesign.currentArms(log + [next]) == ["p0": "B", "p1": "B", "p2": "A"])
    }

    @Test("a correction names one of the study's other arms and gives a reason")
    func correctionChecked() throws {
        let arms = ["app", "control"]
        func fields(_ arm: String?, _ reason: String?) -> Set<String> {
            do {
                _ = try AllocationCorrection.validate(arm: arm, reason: reason, arms: arms, current: "app")
                return []
            } catch { return Set(error.errors.map(\.field)) }
        }
        #expect(fields("control", "Allocated by mistake at the front desk.").isEmpty)
        #expect(fields("app", "same") == ["arm"])
        #expect(fields("waitlist", "unknown") == ["arm"])
        #expect(fields("control", " ") == ["reason"])
        #expect(fields("control", String(repeating: "x", count: 501)) == ["reason"])
        #expect(fields(nil, nil) == ["arm", "reason"])
    }

    @Test("a study's settings make its design: shares, targets and blocks per arm, cycles of days from their start")
    func settingsMakeDesigns() {
        let arms = ["app", "control"]
        let blocks = AllocationSettings(ratios: [2, 1], targets: [20, 0], blockMultiples: [1, 3], factors: [.gender])
        let made = blocks.design(arms: arms, allocation: .permutedBlocks, seed: 7, today: Self.day0)
        #expect(made.problems.isEmpty)
        #expect(made.design.arms == [.init("app", ratio: 2, target: 20), .init("control")])
        #expect(made.design.method == .permutedBlocks(multiples: [1, 3]) && made.design.factors == ["gender"])
        #expect(AllocationSettings(made.design) == blocks)
        let cycles = AllocationSettings(cycleDays: 28)
        let cycled = cycles.design(arms: arms, allocation: .sequentialCycles, seed: 7, today: Self.day0)
        #expect(cycled.design.method == .sequentialCycles(.period(days: 28, from: Self.day0), drawnStart: false))
    }

    @Test("settings are checked at the door, naming each setting; cycles take days or admissions, not both or none")
    func settingsChecked() {
        let arms = ["app", "control"]
        func fields(_ settings: AllocationSettings, _ allocation: ArmAllocation) -> Set<String> {
            Set(settings.design(arms: arms, allocation: allocation, seed: 1, today: Self.day0).problems.map(\.field))
        }
        #expect(
            fields(.init(ratios: [0, 1], targets: [-1, 5]), .random) == [
                "allocationSettings.ratios", "allocationSettings.targets",
            ])
        #expect(fields(.init(ratios: [1, 1, 1]), .alternating) == ["allocationSettings.ratios"])
        #expect(fields(.init(blockMultiples: [1, 11]), .permutedBlocks) == ["allocationSettings.blockMultiples"])
        #expect(
            fields(.init(preferred: 0.3), .minimisation) == [
                "allocationSettings.preferred", "allocationSettings.factors",
            ])
        #expect(fields(.init(), .sequentialCycles) == ["allocationSettings.cycleDays"])
        #expect(
            fields(.init(cycleDays: 7, cycleAdmissions: 4), .sequentialCycles) == ["allocationSettings.cycleAdmissions"]
        )
        #expect(fields(.init(cycleAdmissions: 1 << 62), .sequentialCycles) == ["allocationSettings.cycleAdmissions"])
        #expect(AllocationSettings(cycleDays: -3).problems().map(\.field) == ["allocationSettings.cycleDays"])
    }

    @Test("a participant's level of a factor: their gender, their age group on the day of joining, else unknown")
    func factorLevels() {
        let day = LocalDate(year: 2026, month: 3, day: 2)!
        #expect(AllocationFactor.gender.level(gender: "female", dateOfBirth: nil, on: day) == "female")
        #expect(AllocationFactor.gender.level(gender: nil, dateOfBirth: nil, on: day) == "unknown")
        let born = { (text: String) in LocalDate(text) }
        #expect(AllocationFactor.ageGroup.level(gender: nil, dateOfBirth: born("1996-03-03"), on: day) == "under30")
        #expect(AllocationFactor.ageGroup.level(gender: nil, dateOfBirth: born("1996-03-02"), on: day) == "30to49")
        #expect(AllocationFactor.ageGroup.level(gender: nil, dateOfBirth: born("1976-03-02"), on: day) == "50plus")
        #expect(AllocationFactor.ageGroup.level(gender: nil, dateOfBirth: nil, on: day) == "unknown")
    }
}
