import FluentKit
import Foundation
import NIOConcurrencyHelpers
import SQLKit
import SQLiteKit

/// The columns of a prepared statement's result, named once and shared by every row it returns.
final class SQLiteColumns: @unchecked Sendable {
    let names: [String]
    private let places: [String: Int]
    /// For each model read through the statement, its fields' places: a joined query names a model's columns
    /// `<schema>_<field>`.
    private let underSchema = NIOLockedValueBox<[String: [String: Int]]>([:])

    init(_ names: [String]) {
        self.names = names
        places = Dictionary(names.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// A few names are compared one by one, lengths first, which costs less than hashing the name asked for.
    func place(of column: String) -> Int? {
        guard names.count <= 12 else { return places[column] }
        let length = column.utf8.count
        return names.firstIndex { $0.utf8.count == length && $0 == column }
    }

    func places(under schema: String) -> [String: Int] {
        underSchema.withLockedValue { known in
            if let fields = known[schema] { return fields }
            let prefix = schema + "_"
            var fields: [String: Int] = [:]
            for (place, name) in names.enumerated()
            where name.hasPrefix(prefix) && fields[String(name.dropFirst(prefix.count))] == nil {
                fields[String(name.dropFirst(prefix.count))] = place
            }
            known[schema] = fields
            return fields
        }
    }
}

/// One row of a result, as SQLKit and Fluent read it. Values decode as SQLiteKit decodes them; the kinds every row
/// has (ids, texts, numbers, instants) are read without going through a decoder.
struct SQLiteResultRow: SQLRow, Sendable {
    let columns: SQLiteColumns
    let values: [SQLiteData]

    var allColumns: [String] { columns.names }

    func contains(column: String) -> Bool { columns.place(of: column) != nil }

    func decodeNil(column: String) throws -> Bool {
        guard let place = columns.place(of: column) else { return true }
        return values[place] == .null
    }

    func decode<D: Decodable>(column: String, as type: D.Type) throws -> D {
        guard let place = columns.place(of: column) else { throw SQLiteResultRow.MissingColumn(column: column) }
        return try Self.decode(values[place], as: type)
    }

    struct MissingColumn: Error, CustomStringConvertible {
        let column: String
        var description: String { "no column \(column) in the result" }
    }

    private static let decoder = SQLiteDataDecoder()

    static func decode<D: Decodable>(_ value: SQLiteData, as type: D.Type) throws -> D {
        switch value {
        case .text(let text):
            if let direct = exactly(text, as: D.self) { return direct }
            if D.self == UUID.self || D.self == UUID?.self, let id = UUIDText.parse(text),
                let direct = exactly(id, as: D.self)
            {
                return direct
            }
        case .integer(let integer):
            if let direct = exactly(integer, as: D.self) { return direct }
            if integer == 0 || integer == 1, let direct = exactly(integer == 1, as: D.self) { return direct }
            if let direct = exactly(Double(integer), as: D.self) { return direct }
        case .float(let double):
            if let direct = exactly(Self.date(double), as: D.self) { return direct }
            if let direct = exactly(double, as: D.self) { return direct }
        case .null:
            // A null read as an optional of one of those kinds.
            if D.self == UUID?.self { return unsafeBitCast(UUID?.none, to: D.self) }
            if D.self == String?.self { return unsafeBitCast(String?.none, to: D.self) }
            if D.self == Date?.self { return unsafeBitCast(Date?.none, to: D.self) }
            if D.self == Int?.self { return unsafeBitCast(Int?.none, to: D.self) }
            if D.self == Double?.self { return unsafeBitCast(Double?.none, to: D.self) }
            if D.self == Bool?.self { return unsafeBitCast(Bool?.none, to: D.self) }
        case .blob:
            break
        }
        return try decoder.decode(D.self, from: value)
    }

    /// `value` as `D`, when `D` is its type or an optional of it: optional fields are read directly too, as the decoder
    /// would read them only through a nested decoder (and ids through the C library's sscanf).
    @inline(__always)
    private static func exactly<Value, D>(_ value: Value, as type: D.Type) -> D? {
        if D.self == Value.self { return unsafeBitCast(value, to: D.self) }
        if D.self == Value?.self { return unsafeBitCast(Value?.some(value), to: D.self) }
        return nil
    }

    /// An instant as SQLiteNIO reads it: rounded to the microsecond since the reference date.
    private static func date(_ secondsSince1970: Double) -> Date {
        let sinceReference = secondsSince1970 - Date.timeIntervalBetween1970AndReferenceDate
        return Date(timeIntervalSinceReferenceDate: (sinceReference * 1e6).rounded() / 1e6)
    }
}

/// A row as Fluent reads a model from it.
struct SQLiteModelOutput: DatabaseOutput {
    let row: SQLiteResultRow
    /// The places of the current model's fields, or nil before a model is chosen.
    let fields: [String: Int]?

    init(_ row: SQLiteResultRow) {
        self.row = row
        fields = nil
    }

    private init(row: SQLiteResultRow, fields: [String: Int]) {
        self.row = row
        self.fields = fields
    }

    var description: String { "\(row.columns.names)" }

    func schema(_ schema: String) -> any DatabaseOutput {
        SQLiteModelOutput(row: row, fields: row.columns.places(under: schema))
    }

    private func place(_ key: FieldKey) -> Int? {
        fields.map { $0[key.description] } ?? row.columns.place(of: key.description)
    }

    func contains(_ key: FieldKey) -> Bool { place(key) != nil }

    func decodeNil(_ key: FieldKey) throws -> Bool {
        guard let place = place(key) else { return true }
        return row.values[place] == .null
    }

    func decode<T: Decodable>(_ key: FieldKey, as type: T.Type) throws -> T {
        guard let place = place(key) else { throw SQLiteResultRow.MissingColumn(column: key.description) }
        return try SQLiteResultRow.decode(row.values[place], as: type)
    }
}

/// Values as SQLiteKit's encoder writes them, the common kinds without going through the encoder.
enum SQLiteValues {
    private static let encoder = SQLiteDataEncoder()

    static func data(_ value: any Encodable) throws -> SQLiteData {
        switch value {
        case let id as UUID: return .text(UUIDText.upper(id))
        case let text as String: return .text(text)
        case let date as Date: return .float(date.timeIntervalSince1970)
        case let integer as Int: return .integer(integer)
        case let double as Double: return .float(double)
        case let bool as Bool: return .integer(bool ? 1 : 0)
        default: return try encoder.encode(value)
        }
    }
}
