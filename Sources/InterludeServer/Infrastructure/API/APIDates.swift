import Foundation
import OpenAPIRuntime

/// Reads API timestamps as browsers and phones write them — ISO 8601 with an offset, with or without fractional
/// seconds (`Date.toISOString()` adds milliseconds) — and writes them without fractions.
struct APIDateTranscoder: DateTranscoder {
    private static let whole = Date.ISO8601FormatStyle()
    private static let fractional = Date.ISO8601FormatStyle(includingFractionalSeconds: true)

    func encode(_ date: Date) throws -> String {
        Self.whole.format(date)
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
