import Foundation

/// A seeded generator, so a simulation can be run again exactly.
public struct SeededRandom: Sendable {
    private var state: UInt64

    public init(seed: UInt64) {
        state = seed &+ 0x9E37_79B9_7F4A_7C15
    }

    /// A generator of its own for one thing (a stratum's block, a participant's decision point), drawn from `seed`
    /// and the thing's name: the same on every machine and in every run, unlike `Hasher`.
    public init(seed: UInt64, for name: String) {
        let hash = name.utf8.reduce(0xcbf2_9ce4_8422_2325 as UInt64) { ($0 ^ UInt64($1)) &* 0x100_0000_01b3 }
        var mixer = SeededRandom(seed: hash)
        self.init(seed: seed ^ mixer.next())
    }

    /// SplitMix64.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    public mutating func unit() -> Double { Double(next() >> 11) / Double(1 << 53) }
    public mutating func chance(_ probability: Double) -> Bool { unit() < probability }
    public mutating func index(_ count: Int) -> Int { Int(next() % UInt64(max(count, 1))) }
    public mutating func between(_ low: Double, _ high: Double) -> Double { low + (high - low) * unit() }

    /// A number in `range`, evenly spread.
    public mutating func next(in range: ClosedRange<Double>) -> Double { between(range.lowerBound, range.upperBound) }
}
