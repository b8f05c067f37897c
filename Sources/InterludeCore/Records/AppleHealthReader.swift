import Foundation

/// Reads the samples out of an Apple Health export (`export.xml`) as its bytes arrive, in constant memory: only a
/// tag cut off at the end of a chunk is kept for the next one. Records of the types Interlude knows become samples
/// as sent (checked later like any upload); every other record is only counted.
public struct AppleHealthReader: Sendable {
    public enum Problem: Error, Equatable {
        /// A tag longer than any export writes: this is not an Apple Health export.
        case tagTooLong
    }

    /// The longest tag read; a record with its device description is a few hundred bytes.
    public static let tagLimit = 1 << 20

    /// Records of types Interlude does not collect, and sleep records that are not sleep (in bed, awake).
    public private(set) var otherRecords = 0
    private var pending: [UInt8] = []
    /// A record whose metadata is still being read.
    private var open: Sample.Raw?

    public init() {}

    /// The samples whose record ended in this chunk.
    public mutating func feed(_ chunk: some Sequence<UInt8>) throws(Problem) -> [Sample.Raw] {
        pending.append(contentsOf: chunk)
        var samples: [Sample.Raw] = []
        var index = 0
        let count = pending.count
        scan: while true {
            guard let opening = pending[index...].firstIndex(of: UInt8(ascii: "<")) else {
                index = count
                break
            }
            var quote: UInt8 = 0
            var cursor = opening + 1
            while cursor < count {
                let byte = pending[cursor]
                if quote != 0 {
                    if byte == quote { quote = 0 }
                } else if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") {
                    quote = byte
                } else if byte == UInt8(ascii: ">") {
                    break
                }
                cursor += 1
            }
            guard cursor < count else {
                index = opening
                break scan
            }
            if let sample = handle(pending[(opening + 1)..<cursor]) { samples.append(sample) }
            index = cursor + 1
        }
        pending.removeFirst(index)
        if pending.count > Self.tagLimit { throw .tagTooLong }
        return samples
    }

    private mutating func handle(_ tag: ArraySlice<UInt8>) -> Sample.Raw? {
        guard let first = tag.first else { return nil }
        if first == UInt8(ascii: "/") {
            guard Self.name(of: tag.dropFirst()) == "Record", let record = open else { return nil }
            open = nil
            return record
        }
        if first == UInt8(ascii: "?") || first == UInt8(ascii: "!") { return nil }
        switch Self.name(of: tag) {
        case "Record":
            let closed = tag.last == UInt8(ascii: "/")
            guard let sample = sample(from: Self.attributes(of: tag)) else { return nil }
            if closed { return sample }
            open = sample
        case "MetadataEntry" where open != nil:
            let attributes = Self.attributes(of: tag)
            if attributes["key"] == "HKMetadataKeyHeartRateMotionContext" {
                open?.motionContext = attributes["value"].flatMap { Int($0) }
            }
        default:
            break
        }
        return nil
    }

    private mutating func sample(from attributes: [String: String]) -> Sample.Raw? {
        guard let identifier = attributes["type"], let type = SampleType(healthKitIdentifier: identifier) else {
            otherRecords += 1
            return nil
        }
        let start = attributes["startDate"].flatMap(Self.date)
        let end = attributes["endDate"].flatMap(Self.date)
        var value = attributes["value"].flatMap { Double($0) }
        var unit = attributes["unit"]
        switch type {
        case .sleepAnalysis:
            guard attributes["value"]?.hasPrefix("HKCategoryValueSleepAnalysisAsleep") == true else {
                otherRecords += 1
                return nil
            }
            value = zip(start, end).map { $1.timeIntervalSince($0) / 60 }
            unit = "min"
        case .walkingDoubleSupport where unit == "%":
            // The export writes the share as a fraction under a "%" unit.
            unit = "1"
        default:
            break
        }
        let device = Self.device(attributes["device"] ?? "")
        var raw = Sample.Raw(
            type: type.rawValue, value: value, unit: unit, start: start, end: end,
            sourceID: "apple-health:"
                + Self.digest([
                    identifier, attributes["startDate"], attributes["endDate"], attributes["value"],
                    attributes["sourceName"], attributes["device"],
                ]),
            source: Sample.Source(
                app: attributes["sourceName"], deviceName: device["name"],
                deviceModel: device["hardware"] ?? device["model"],
                osVersion: device["software"] ?? attributes["sourceVersion"]))
        if attributes["startDate"] != nil, start == nil { raw.unreadable.insert("startsAt") }
        if attributes["endDate"] != nil, end == nil { raw.unreadable.insert("endsAt") }
        return raw
    }

    private func zip(_ start: Date?, _ end: Date?) -> (Date, Date)? {
        guard let start, let end else { return nil }
        return (start, end)
    }

    /// The element's name: the bytes up to the first space or slash.
    static func name(of tag: ArraySlice<UInt8>) -> String {
        let end =
            tag.firstIndex { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "/") || $0 == 10 || $0 == 13 || $0 == 9 }
            ?? tag.endIndex
        return String(decoding: tag[tag.startIndex..<end], as: UTF8.self)
    }

    /// The tag's `name="value"` pairs, entities resolved.
    static func attributes(of tag: ArraySlice<UInt8>) -> [String: String] {
        var attributes: [String: String] = [:]
        var index = tag.firstIndex { $0 == UInt8(ascii: " ") || $0 == 10 || $0 == 13 || $0 == 9 } ?? tag.endIndex
        while index < tag.endIndex {
            guard let equals = tag[index...].firstIndex(of: UInt8(ascii: "=")), equals + 1 < tag.endIndex else { break }
            let quote = tag[equals + 1]
            guard quote == UInt8(ascii: "\"") || quote == UInt8(ascii: "'"),
                let closing = tag[(equals + 2)...].firstIndex(of: quote)
            else { break }
            let name = String(decoding: tag[index..<equals], as: UTF8.self).trimmingCharacters(
                in: .whitespacesAndNewlines)
            attributes[name] = unescaped(String(decoding: tag[(equals + 2)..<closing], as: UTF8.self))
            index = closing + 1
        }
        return attributes
    }

    private static func unescaped(_ text: String) -> String {
        guard text.contains("&") else { return text }
        var result = ""
        var rest = Substring(text)
        while let amp = rest.firstIndex(of: "&") {
            result += rest[rest.startIndex..<amp]
            guard let semicolon = rest[amp...].firstIndex(of: ";") else { break }
            let entity = rest[rest.index(after: amp)..<semicolon]
            switch entity {
            case "lt": result += "<"
            case "gt": result += ">"
            case "amp": result += "&"
            case "quot": result += "\""
            case "apos": result += "'"
            default:
                let code =
                    entity.hasPrefix("#x")
                    ? UInt32(entity.dropFirst(2), radix: 16) : entity.hasPrefix("#") ? UInt32(entity.dropFirst()) : nil
                result += code.flatMap(Unicode.Scalar.init).map { String(Character($0)) } ?? "&\(entity);"
            }
            rest = rest[rest.index(after: semicolon)...]
        }
        return result + rest
    }

    /// "2024-03-01 07:15:00 +0100", the export's format, read by hand: there are millions of them.
    static func date(_ text: String) -> Date? {
        let bytes = Array(text.utf8)
        guard bytes.count == 25 else { return nil }
        func number(_ from: Int, _ length: Int) -> Int? {
            var value = 0
            for byte in bytes[from..<(from + length)] {
                guard byte >= 48, byte <= 57 else { return nil }
                value = value * 10 + Int(byte - 48)
            }
            return value
        }
        guard let year = number(0, 4), let month = number(5, 2), let day = number(8, 2), let hour = number(11, 2),
            let minute = number(14, 2), let second = number(17, 2), let offsetHours = number(21, 2),
            let offsetMinutes = number(23, 2),
            bytes[20] == UInt8(ascii: "+") || bytes[20] == UInt8(ascii: "-"), hour < 24, minute < 60, second < 61,
            let date = LocalDate(year: year, month: month, day: day)
        else { return nil }
        let offset = (offsetHours * 3600 + offsetMinutes * 60) * (bytes[20] == UInt8(ascii: "-") ? -1 : 1)
        return Date(
            timeIntervalSince1970: Double(date.daysSinceEpoch * 86_400 + hour * 3600 + minute * 60 + second - offset))
    }

    /// The parts of HealthKit's device description: `<<HKDevice: 0x…>, name:Apple Watch, model:Watch, …>`.
    static func device(_ text: String) -> [String: String] {
        var parts: [String: String] = [:]
        // Parts are separated by a comma and a space; a hardware name has commas of its own ("Watch6,1").
        for piece in text.components(separatedBy: ", ") {
            guard let colon = piece.firstIndex(of: ":") else { continue }
            let key = piece[piece.startIndex..<colon].trimmingCharacters(in: .whitespaces)
            var value = piece[piece.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            if value.hasSuffix(">") { value.removeLast() }
            if !key.hasPrefix("<"), !value.isEmpty { parts[key] = value }
        }
        return parts
    }

    /// A stable 128-bit digest (two FNV-1a hashes) of a record's identifying attributes: the same record read again
    /// gets the same source id, so a second import of an export changes nothing.
    static func digest(_ parts: [String?]) -> String {
        var first: UInt64 = 0xcbf2_9ce4_8422_2325
        var second: UInt64 = 0x8422_2325_cbf2_9ce4
        for part in parts {
            for byte in (part ?? "").utf8 + [0x1f] {
                first = (first ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
                second = (second ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 ^ (second >> 29)
            }
        }
        return String(first, radix: 16) + String(second, radix: 16)
    }
}
