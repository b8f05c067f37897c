import Foundation

/// A mail domain in the ASCII form the mail system uses: Unicode labels are normalised (NFKC, lower case) and
/// encoded with Punycode (RFC 3492) behind `xn--`, so `exämple.org` and `xn--exmple-cua.org` are one domain.
public enum DomainName {
    /// The ASCII form of `domain`, or nil when it is not a domain a mailbox can be at: an empty or over-long
    /// label, a label starting or ending with a dash, characters other than letters, digits and dashes, or a label
    /// that mixes Latin letters with Greek or Cyrillic ones (the look-alikes of a homograph address).
    public static func ascii(_ domain: String) -> String? {
        let normalised = domain.precomposedStringWithCompatibilityMapping.lowercased()
        var labels: [String] = []
        for label in normalised.split(separator: ".", omittingEmptySubsequences: false) {
            guard let encoded = asciiLabel(String(label)) else { return nil }
            labels.append(encoded)
        }
        guard labels.count >= 2, let last = labels.last, last.count >= 2 else { return nil }
        let joined = labels.joined(separator: ".")
        return joined.count <= 253 ? joined : nil
    }

    private static func asciiLabel(_ label: String) -> String? {
        guard !label.isEmpty, !label.hasPrefix("-"), !label.hasSuffix("-") else { return nil }
        let allowed = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: "-"))
        guard label.unicodeScalars.allSatisfy({ allowed.contains($0) }), !mixesScripts(label) else { return nil }
        let encoded = label.unicodeScalars.allSatisfy(\.isASCII) ? label : Punycode.encode(label).map { "xn--" + $0 }
        guard let encoded, encoded.count <= 63 else { return nil }
        return encoded
    }

    private enum Script { case latin, greek, cyrillic }

    private static func mixesScripts(_ label: String) -> Bool {
        var seen: Set<Script> = []
        for scalar in label.unicodeScalars where scalar.properties.isAlphabetic {
            switch scalar.value {
            case 0x370...0x3FF, 0x1F00...0x1FFF: seen.insert(.greek)
            case 0x400...0x52F, 0x1C80...0x1C8F, 0x2DE0...0x2DFF, 0xA640...0xA69F: seen.insert(.cyrillic)
            case 0x41...0x5A, 0x61...0x7A, 0xC0...0x24F, 0x1E00...0x1EFF: seen.insert(.latin)
            default: break
            }
        }
        return seen.count > 1
    }
}

/// The Bootstring encoding of RFC 3492 with the Punycode parameters, as IDNA uses it for domain labels.
public enum Punycode {
    private static let base = 36
    private static let tMin = 1
    private static let tMax = 26
    private static let skew = 38
    private static let damp = 700
    private static let initialBias = 72
    private static let initialN = 128

    /// The encoded label without the `xn--` prefix; nil when it would overflow.
    public static func encode(_ input: String) -> String? {
        let points = input.unicodeScalars.map { Int($0.value) }
        var output = String(String.UnicodeScalarView(input.unicodeScalars.filter(\.isASCII)))
        let basicCount = output.count
        var handled = basicCount
        if basicCount > 0 { output.append("-") }
        var n = initialN
        var delta = 0
        var bias = initialBias
        while handled < points.count {
            guard let next = points.filter({ $0 >= n }).min() else { return nil }
            let (step, overflow) = (next - n).multipliedReportingOverflow(by: handled + 1)
            guard !overflow, delta <= Int.max - step else { return nil }
            delta += step
            n = next
            for point in points {
                if point < n { delta += 1 }
                guard point == n else { continue }
                var q = delta
                var k = base
                while true {
                    let t = k <= bias ? tMin : (k >= bias + tMax ? tMax : k - bias)
                    if q < t { break }
                    output.append(digit(t + (q - t) % (base - t)))
                    q = (q - t) / (base - t)
                    k += base
                }
                output.append(digit(q))
                bias = adapt(delta, points: handled + 1, first: handled == basicCount)
                delta = 0
                handled += 1
            }
            delta += 1
            n += 1
        }
        return output
    }

    private static func adapt(_ delta: Int, points: Int, first: Bool) -> Int {
        var delta = first ? delta / damp : delta / 2
        delta += delta / points
        var k = 0
        while delta > ((base - tMin) * tMax) / 2 {
            delta /= base - tMin
            k += base
        }
        return k + (base - tMin + 1) * delta / (delta + skew)
    }

    private static func digit(_ value: Int) -> Character {
        let scalar = value < 26 ? 0x61 + value : 0x30 + value - 26
        return Character(Unicode.Scalar(UInt8(scalar)))
    }
}
