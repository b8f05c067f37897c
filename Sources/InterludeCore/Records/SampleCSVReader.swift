import Foundation

/// Reads samples from a CSV file as its bytes arrive: a header row naming at least `type`, `value`, `unit`,
/// `start` and `end` (optionally `sourceId`, `app`, `device`), then a sample per row. A type is Interlude's name or
/// Apple Health's identifier; times are ISO 8601. A row without a source id gets one from its content, so the same
/// file imported twice changes nothing.
public struct SampleCSVReader: Sendable {
    public enum Problem: Error, Equatable, CustomStringConvertible {
        case header
        case lineTooLong

        public var description: String {
            switch self {
            case .header: "the first row must name the columns type, value, unit, start and end"
            case .lineTooLong: "a row is longer than any sample"
            }
        }
    }

    public static let lineLimit = 64 * 1024
    static let required = ["type", "value", "unit", "start", "end"]

    private var pending: [UInt8] = []
    private var columns: [String: Int]?

    public init() {}

    public mutating func feed(_ chunk: some Sequence<UInt8>) throws(Problem) -> [Sample.Raw] {
        pending.append(contentsOf: chunk)
        var samples: [Sample.Raw] = []
        var start = 0
        var quoted = false
        for index in pending.indices {
            let byte = pending[index]
            if byte == UInt8(ascii: "\"") { quoted.toggle() }
            guard byte == 10, !quoted else { continue }
            if let sample = try row(pending[start..<index]) { samples.append(sample) }
            start = index + 1
        }
        pending.removeFirst(start)
        if pending.count > Self.lineLimit { throw .lineTooLong }
        return samples
    }

    /// The last row, when the file does not end with a line break.
    public mutating func finish() throws(Problem) -> [Sample.Raw] {
        defer { pending = [] }
        guard !pending.isEmpty else {
            if columns == nil { throw .header }
            return []
        }
        return try row(pending[...]).map { [$0] } ?? []
    }

    private mutating func row(_ bytes: ArraySlice<UInt8>) throws(Problem) -> Sample.Raw? {
        let text = String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .newlines)
        guard !text.trimmingCharacters(in: .whitespaces).isEmpty, let fields = CSV.parse(text).first else { return nil }
        guard let columns else {
            let names = fields.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            guard Self.required.allSatisfy(names.contains) else { throw .header }
            columns = Dictionary(names.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
            return nil
        }
        func field(_ name: String) -> String? {
            guard let index = columns[name.lowercased()], index < fields.count else { return nil }
            let value = fields[index].trimmingCharacters(in: .whitespaces)
            return value.isEmpty ? nil : value
        }
        let typeText = field("type")
        let type = typeText.flatMap { SampleType(rawValue: $0) ?? SampleType(healthKitIdentifier: $0) }
        let start = field("start").flatMap(Self.date)
        let end = field("end").flatMap(Self.date)
        var raw = Sample.Raw(
            type: type?.rawValue ?? typeText, value: field("value").flatMap { Double($0) }, unit: field("unit"),
            start: start, end: end,
            sourceID: field("sourceId") ?? "csv:"
                + AppleHealthReader.digest([typeText, field("value"), field("unit"), field("start"), field("end")]),
            source: Sample.Source(app: field("app"), deviceName: field("device")))
        if field("start") != nil, start == nil { raw.unreadable.insert("startsAt") }
        if field("end") != nil, end == nil { raw.unreadable.insert("endsAt") }
        if field("value") != nil, raw.value == nil { raw.unreadable.insert("value") }
        return raw
    }

    /// ISO 8601, with or without fractions of a second, or the Apple Health export's own format.
    static func date(_ text: String) -> Date? {
        if let date = try? Date(text, strategy: .iso8601) { return date }
        if let date = try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true)) {
            return date
        }
        return AppleHealthReader.date(text)
    }
}
