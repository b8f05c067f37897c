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
        utc = Self.format(date, offset: nil)
        local = Self.format(date, offset: zone.secondsFromGMT(for: date))
        self.zone = zone.identifier
    }

    /// Calendar arithmetic and digits written by hand rather than `Calendar` and `String(format:)`, which are many
    /// times slower, and an export writes millions of these. Without an offset the time is UTC, written with `Z`.
    private static func format(_ date: Date, offset: Int?) -> String {
        let milliseconds = ((date.timeIntervalSince1970 + Double(offset ?? 0)) * 1000).rounded().clampedInt ?? 0
        let days = milliseconds >= 0 ? milliseconds / 86_400_000 : (milliseconds - 86_399_999) / 86_400_000
        let ofDay = milliseconds - days * 86_400_000
        let day = LocalDate(daysSinceEpoch: days)
        var text = ""
        text.reserveCapacity(29)
        text.appendDigits(day.year, width: 4)
        text += "-"
        text.appendDigits(day.month, width: 2)
        text += "-"
        text.appendDigits(day.day, width: 2)
        text += "T"
        text.appendClock(hour: ofDay / 3_600_000, minute: ofDay / 60_000 % 60)
        text += ":"
        text.appendDigits(ofDay / 1000 % 60, width: 2)
        text += "."
        text.appendDigits(ofDay % 1000, width: 3)
        guard let offset else { return text + "Z" }
        text += offset < 0 ? "-" : "+"
        text.appendClock(hour: abs(offset) / 3600, minute: abs(offset) % 3600 / 60)
        return text
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
