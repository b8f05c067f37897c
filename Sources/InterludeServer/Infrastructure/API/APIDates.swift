import Foundation
import InterludeCore
import OpenAPIRuntime

/// Reads API timestamps as browsers and phones write them — ISO 8601 with an offset, with or without fractional
/// seconds (`Date.toISOString()` adds milliseconds) — and writes them without fractions.
struct APIDateTranscoder: DateTranscoder {
    private static let whole = Date.ISO8601FormatStyle()
    private static let fractional = Date.ISO8601FormatStyle(includingFractionalSeconds: true)

    func encode(_ date: Date) throws -> String {
        Self.utcText(date) ?? Self.whole.format(date)
    }

    /// `yyyy-MM-ddTHH:mm:ssZ` by arithmetic on the seconds since 1970 (the day as `LocalDate` counts it), the
    /// fractions dropped as the format style drops them. A sync answer writes hundreds of dates, and the format
    /// style's calendar made up a tenth of its encoding. Nil outside the years 1900–9999, which the format style
    /// writes (before 1582 in the Julian calendar).
    static func utcText(_ date: Date) -> String? {
        guard let (days, second) = utcParts(date) else { return nil }
        return String(unsafeUninitializedCapacity: 20) { buffer in
            writeUTC(days: days, second: second, into: buffer)
            return 20
        }
    }

    /// `utcText`'s twenty bytes appended to `bytes`, without a string between; false (nothing appended) where
    /// `utcText` is nil.
    static func appendUTC(_ date: Date, to bytes: inout [UInt8]) -> Bool {
        guard let (days, second) = utcParts(date) else { return false }
        let start = bytes.count
        bytes.append(contentsOf: repeatElement(0, count: 20))
        bytes.withUnsafeMutableBufferPointer { all in
            writeUTC(days: days, second: second, into: UnsafeMutableBufferPointer(rebasing: all[start..<start + 20]))
        }
        return true
    }

    private static func utcParts(_ date: Date) -> (days: Int, second: Int)? {
        let interval = date.timeIntervalSince1970.rounded(.down)
        guard interval >= -2_208_988_800, interval < 253_402_300_800 else { return nil }
        let whole = Int(interval)
        let days = whole >= 0 ? whole / 86_400 : (whole - 86_399) / 86_400
        return (days, whole - days * 86_400)
    }

    private static func writeUTC(days: Int, second: Int, into buffer: UnsafeMutableBufferPointer<UInt8>) {
        let day = LocalDate(daysSinceEpoch: days)
        func put(_ value: Int, digits: Int, at offset: Int) {
            var rest = value
            for index in stride(from: offset + digits - 1, through: offset, by: -1) {
                buffer[index] = UInt8(ascii: "0") + UInt8(rest % 10)
                rest /= 10
            }
        }
        put(day.year, digits: 4, at: 0)
        put(day.month, digits: 2, at: 5)
        put(day.day, digits: 2, at: 8)
        put(second / 3_600, digits: 2, at: 11)
        put(second / 60 % 60, digits: 2, at: 14)
        put(second % 60, digits: 2, at: 17)
        buffer[4] = UInt8(ascii: "-")
        buffer[7] = UInt8(ascii: "-")
        buffer[10] = UInt8(ascii: "T")
        buffer[13] = UInt8(ascii: ":")
        buffer[16] = UInt8(ascii: ":")
        buffer[19] = UInt8(ascii: "Z")
    }

    func decode(_ text: String) throws -> Date {
        if let date = try? Self.whole.parse(text) { return date }
        if let date = try? Self.fractional.parse(text) { return date }
        throw AppError.invalidDateTime
    }
}

/// Encodes API types by hand, where a body is built as a JSON object first: dates as the transcoder writes them.
enum APIJSON {
    static var encoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(try APIDateTranscoder().encode(date))
        }
        return encoder
    }
}
