import Foundation

/// The range every number that enters Interlude lies in unless its field documents a narrower one: an answer, an
/// item's or a band's bounds, a rule's comparison value, a scoring factor. Large enough for any score, measurement
/// or count a study records; small enough that every such number converts to an integer and prints exactly.
public enum NumberLimits {
    public static let magnitude: Double = 1_000_000_000
    public static let range: ClosedRange<Double> = -magnitude...magnitude

    /// Finite and inside `range`.
    public static func accepts(_ value: Double, in range: ClosedRange<Double> = range) -> Bool {
        value.isFinite && range.contains(value)
    }
}

extension FieldValidator {
    /// Refuses a number that is not finite or lies outside `range` (by default ±1 000 000 000), naming the field.
    /// Returns the number when it is usable.
    @discardableResult
    public mutating func number(
        _ value: Double?, field: String, required: Bool = false, in range: ClosedRange<Double> = NumberLimits.range
    ) -> Double? {
        guard let value else {
            if required { add(field, .required) }
            return nil
        }
        guard NumberLimits.accepts(value, in: range) else {
            add(field, .outOfRange, limit: Int(exactly: range.upperBound.rounded(.down)))
            return nil
        }
        return value
    }
}

extension Double {
    /// The nearest whole number as an `Int`, held to the range an `Int` can take; nil for NaN. Unlike `Int(_:)`,
    /// it never stops the process, whatever the value.
    public var clampedInt: Int? {
        guard !isNaN else { return nil }
        let rounded = self.rounded()
        if rounded >= 9.2e18 { return Int.max }
        if rounded <= -9.2e18 { return Int.min }
        return Int(rounded)
    }

    /// The number as people of `language` read it: `plainText` with the decimal comma in German.
    public func plainText(decimals: Int = 2, in language: Language) -> String {
        let text = plainText(decimals: decimals)
        return language == .de ? text.replacingOccurrences(of: ".", with: ",") : text
    }

    /// The number as people read it: whole numbers without decimals, others with at most `decimals` places and no
    /// trailing zeros, very large ones in exponent form; never traps, also for NaN and infinities.
    public func plainText(decimals: Int = 2) -> String {
        guard isFinite else { return isNaN ? "NaN" : (self < 0 ? "-∞" : "∞") }
        if Swift.abs(self) >= 1e15 { return description }
        if self == rounded() { return String(Int(self)) }
        let places = Swift.max(0, Swift.min(decimals, 6))
        var text = String(format: "%.\(places)f", self)
        if text.contains(".") {
            while text.hasSuffix("0") { text.removeLast() }
            if text.hasSuffix(".") { text.removeLast() }
        }
        return text == "-0" ? "0" : text
    }

    /// The number as data files carry it: whole numbers without decimals, others with every digit that tells the
    /// value apart, a dot whatever the locale; empty for NaN and infinities, which no data file can hold.
    public var dataText: String {
        guard isFinite else { return "" }
        if Swift.abs(self) < 1e15, self == rounded() { return String(Int(self)) }
        return description
    }
}
