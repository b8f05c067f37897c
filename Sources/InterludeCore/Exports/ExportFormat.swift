import Foundation

/// An instant as an export writes it: in UTC, and as the participant's local time with its offset, the zone by its
/// IANA name in a column of its own.
public struct ExportTime: Sendable, Equatable {
    /// `2026-03-29T01:30:00.000Z`
    public let utc: String
    /// `2026-03-29T03:30:00.000+02:00`
    public let local: String
    public let zone: String

    public init(_ date: Date, in zone: TimeZone) {
        utc = Self.format(date, in: TimeZone(identifier: "UTC")!, zulu: true)
        local = Self.format(date, in: zone, zulu: false)
        self.zone = zone.identifier
    }

    /// Calendar arithmetic rather than `Calendar`, which is many times slower and an export writes millions of these.
    private static func format(_ date: Date, in zone: TimeZone, zulu: Bool) -> String {
        let offset = zulu ? 0 : zone.secondsFromGMT(for: date)
        let milliseconds = ((date.timeIntervalSince1970 + Double(offset)) * 1000).rounded().clampedInt ?? 0
        let days = milliseconds >= 0 ? milliseconds / 86_400_000 : (milliseconds - 86_399_999) / 86_400_000
        let ofDay = milliseconds - days * 86_400_000
        let date = LocalDate(daysSinceEpoch: days)
        let stamp = String(
            format: "%04d-%02d-%02dT%02d:%02d:%02d.%03d", date.year, date.month, date.day, ofDay / 3_600_000,
            ofDay / 60_000 % 60, ofDay / 1000 % 60, ofDay % 1000)
        if zulu { return stamp + "Z" }
        let sign = offset < 0 ? "-" : "+"
        return stamp + String(format: "%@%02d:%02d", sign, abs(offset) / 3600, abs(offset) % 3600 / 60)
    }
}

/// Column names a statistics package takes as they are: lower case letters, digits and underscores, starting with a
/// letter, at most 100 characters. A multiple-choice item has a column per option, `item___code`, as REDCap names
/// them.
public enum ExportColumn {
    public static let maxLength = 100

    public static func name(_ raw: String) -> String {
        var result = ""
        var lastWasUnderscore = false
        for scalar in raw.lowercased().unicodeScalars {
            if ("a"..."z").contains(scalar) || ("0"..."9").contains(scalar) {
                result.unicodeScalars.append(scalar)
                lastWasUnderscore = false
            } else if !lastWasUnderscore, !result.isEmpty {
                result.append("_")
                lastWasUnderscore = true
            }
        }
        while result.hasSuffix("_") { result.removeLast() }
        if result.isEmpty || result.first?.isNumber == true { result = "v_" + result }
        return String(result.prefix(maxLength))
    }

    public static func option(_ item: String, _ code: String) -> String {
        let base = name(item)
        let suffix = "___" + name(code).replacingOccurrences(of: "v_", with: "", options: .anchored)
        return String(base.prefix(maxLength - suffix.count)) + suffix
    }
}
