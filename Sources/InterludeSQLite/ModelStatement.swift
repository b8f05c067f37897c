import FluentKit
import FluentSQL
import NIOConcurrencyHelpers
import SQLKit

/// Fluent's model queries as the SQLite driver writes them. Writing one out (building SQLKit's expressions from the
/// query, then serializing them) costs more than SQLite takes to run it, and a server asks the same few dozen
/// questions again and again with other values: so the text is written once per shape of query (what is selected,
/// filtered, sorted, set; never the values) and kept, and only the values are gathered each time.
enum ModelStatement {
    /// The statement the SQLite driver makes of a model query.
    static func of(_ query: DatabaseQuery) -> any SQLExpression {
        let statement = SQLQueryConverter(delegate: SQLiteTypes()).convert(query)
        // A created row reports its id back.
        guard case .create = query.action, query.customIDKey != .some(.string("")) else { return statement }
        return SQLKit.SQLList(
            [statement, SQLReturning(.init((query.customIDKey ?? .id).description))], separator: SQLRaw(" "))
    }

    /// The text and values of a model query, written by `database` (its dialect) or taken from the kept texts.
    /// `checking`: every kept text is compared with the one written afresh, values and all, and a difference fails
    /// the query; the test suites run so, which holds every query shape the server issues to the text the SQLite
    /// driver would write.
    static func written(
        _ query: DatabaseQuery, by database: any SQLDatabase, checking: Bool
    ) throws -> (sql: String, binds: [any Encodable & Sendable]) {
        var shape = Shape()
        guard shape.add(query) else { return database.serialize(of(query)) }
        if let sql = kept.withLockedValue({ $0[shape.key] }) {
            if checking { try check(sql, shape.binds, against: query, by: database) }
            return (sql, shape.binds)
        }
        let written = database.serialize(of(query))
        if checking { try check(written.sql, shape.binds, against: query, by: database) }
        keep(written.sql, for: shape.key)
        return (written.sql, shape.binds)
    }

    static func keep(_ sql: String, for key: String) {
        kept.withLockedValue { kept in
            if kept.count >= keptLimit { kept.removeAll(keepingCapacity: true) }
            kept[key] = sql
        }
    }

    private static let keptLimit = 4_096
    private static let kept = NIOLockedValueBox<[String: String]>([:])

    private static func check(
        _ sql: String, _ binds: [any Encodable & Sendable], against query: DatabaseQuery, by database: any SQLDatabase
    ) throws {
        let written = database.serialize(of(query))
        let same =
            written.sql == sql && written.binds.count == binds.count
            && zip(written.binds, binds).allSatisfy { (try? SQLiteValues.data($0)) == (try? SQLiteValues.data($1)) }
        guard same else { throw KeptStatementMismatch(kept: sql, written: written.sql) }
    }

    /// What makes two queries the same statement: everything the text depends on, written into `key` in the order
    /// SQLKit writes it, and the values in the order their placeholders appear. A query with any part written as
    /// custom SQL, a nested field, a `contains` filter or a dictionary value has no shape: it is written each time.
    struct Shape {
        var key = ""
        var binds: [any Encodable & Sendable] = []

        mutating func add(_ query: DatabaseQuery) -> Bool {
            key.reserveCapacity(256)
            write(query.schema, Self.optional(query.space))
            switch query.action {
            case .read:
                write(query.isUnique ? "read-unique" : "read")
                guard query.fields.allSatisfy({ add($0) }) else { return false }
                return addSelection(of: query)
            case .aggregate(.field(let field, let method)):
                guard let name = Self.name(of: method) else { return false }
                write("aggregate", name, query.isUnique ? "unique" : "")
                return add(field) && addSelection(of: query)
            case .create:
                write("create", Self.optional(query.customIDKey?.description))
                return addInsert(of: query)
            case .update:
                write("update")
                return addAssignments(of: query) && add(query.filters)
            case .delete:
                write("delete")
                return add(query.filters)
            case .aggregate(.custom), .custom:
                return false
            }
        }

        private mutating func addSelection(of query: DatabaseQuery) -> Bool {
            guard query.joins.allSatisfy({ add($0) }), add(query.filters) else { return false }
            for sort in query.sorts {
                guard case .sort(let field, let direction) = sort, add(field) else { return false }
                switch direction {
                case .ascending: write("asc")
                case .descending: write("desc")
                case .custom: return false
                }
            }
            for limit in query.limits {
                guard case .count(let count) = limit else { return false }
                write("limit", String(count))
            }
            for offset in query.offsets {
                guard case .count(let count) = offset else { return false }
                write("offset", String(count))
            }
            return true
        }

        /// The columns an insert names (the query's fields its first row has) and the shape of every row's values.
        private mutating func addInsert(of query: DatabaseQuery) -> Bool {
            guard case .dictionary(let first) = query.input.first else { return false }
            let keys = ownKeys(of: query).filter { first[$0] != nil }
            write(keys.map(\.description).joined(separator: ","), String(query.input.count))
            for input in query.input {
                guard case .dictionary(let row) = input, row.count == keys.count else { return false }
                for key in keys {
                    guard let value = row[key], add(value) else { return false }
                }
            }
            return true
        }

        /// The columns an update sets, in the order of the query's fields, and their values' shapes.
        private mutating func addAssignments(of query: DatabaseQuery) -> Bool {
            guard case .dictionary(let values) = query.input.first else { return false }
            for key in ownKeys(of: query) {
                guard let value = values[key] else { continue }
                write(key.description)
                guard add(value) else { return false }
            }
            return true
        }

        private func ownKeys(of query: DatabaseQuery) -> [FieldKey] {
            query.fields.compactMap { field in
                switch field {
                case .path(let path, let schema) where schema == query.schema: path[0]
                case .extendedPath(let path, let schema, let space)
                where schema == query.schema && space == query.space:
                    path[0]
                default: nil
                }
            }
        }

        private mutating func add(_ filters: [DatabaseQuery.Filter]) -> Bool {
            write("where", String(filters.count))
            return filters.allSatisfy { add($0) }
        }

        private mutating func add(_ filter: DatabaseQuery.Filter) -> Bool {
            switch filter {
            case .value(let field, let method, let value):
                guard add(field) else { return false }
                switch (method, value) {
                case (.equality(let inverse), _) where value.isNil:
                    write(inverse ? "is-not-null" : "is-null")
                    return true
                case (.subset(let inverse), .array(let values)) where values.isEmpty:
                    write(inverse ? "in-nothing-inverse" : "in-nothing")
                    return true
                case (.contains, _):
                    return false
                default:
                    guard let name = Self.name(of: method) else { return false }
                    write(name)
                    return add(value)
                }
            case .field(let left, let method, let right):
                guard let name = Self.name(of: method), add(left) else { return false }
                write(name)
                return add(right)
            case .group(let filters, let relation):
                switch relation {
                case .and: write("and(")
                case .or: write("or(")
                case .custom: return false
                }
                guard add(filters) else { return false }
                write(")")
                return true
            case .custom:
                return false
            }
        }

        private mutating func add(_ value: DatabaseQuery.Value) -> Bool {
            switch value {
            case .bind(let bind):
                if value.isNil {
                    write("null")
                } else {
                    write("?")
                    binds.append(bind)
                }
            case .null: write("null")
            case .default: write("default")
            case .enumCase(let name): write("enum", String(name.utf8.count), name)
            case .array(let values):
                write("[", String(values.count))
                guard values.allSatisfy({ add($0) }) else { return false }
                write("]")
            case .dictionary, .custom:
                return false
            }
            return true
        }

        private mutating func add(_ field: DatabaseQuery.Field) -> Bool {
            switch field {
            case .path(let path, let schema) where path.count == 1:
                write(schema, path[0].description)
            case .extendedPath(let path, let schema, let space) where path.count == 1:
                write(Self.optional(space), schema, path[0].description)
            default:
                return false
            }
            return true
        }

        private mutating func add(_ join: DatabaseQuery.Join) -> Bool {
            let method: DatabaseQuery.Join.Method
            switch join {
            case .join(let schema, let alias, let joinMethod, let foreign, let local):
                write("join", schema, Self.optional(alias))
                method = joinMethod
                guard add(foreign), add(local) else { return false }
            case .extendedJoin(let schema, let space, let alias, let joinMethod, let foreign, let local):
                write("join", Self.optional(space), schema, Self.optional(alias))
                method = joinMethod
                guard add(foreign), add(local) else { return false }
            case .advancedJoin(let schema, let space, let alias, let joinMethod, let filters):
                write("join-on", Self.optional(space), schema, Self.optional(alias))
                method = joinMethod
                guard add(filters) else { return false }
            case .custom:
                return false
            }
            switch method {
            case .inner: write("inner")
            case .left: write("left")
            case .custom: return false
            }
            return true
        }

        private static func name(of method: DatabaseQuery.Filter.Method) -> String? {
            switch method {
            case .equality(let inverse): inverse ? "!=" : "="
            case .order(let inverse, let equality): (inverse ? "<" : ">") + (equality ? "=" : "")
            case .subset(let inverse): inverse ? "not-in" : "in"
            case .contains, .custom: nil
            }
        }

        private static func name(of method: DatabaseQuery.Aggregate.Method) -> String? {
            switch method {
            case .count: "count"
            case .sum: "sum"
            case .average: "average"
            case .minimum: "minimum"
            case .maximum: "maximum"
            case .custom: nil
            }
        }

        /// A name that may be missing, written so that missing and empty differ.
        private static func optional(_ name: String?) -> String {
            name.map { "=" + $0 } ?? "-"
        }

        /// Each part ends with a separator no name contains, so two different sequences never write the same key.
        private mutating func write(_ parts: String...) {
            for part in parts {
                key += part
                key.unicodeScalars.append("\u{1F}")
            }
        }
    }
}

/// A kept statement that differs from the one the SQLite driver writes for the same query.
struct KeptStatementMismatch: Error, CustomStringConvertible {
    let kept: String
    let written: String

    var description: String { "the kept statement \(kept) differs from the one written afresh, \(written)" }
}

extension DatabaseQuery.Value {
    /// Whether SQLKit writes the value as NULL: `.null`, or a bound optional holding nothing.
    fileprivate var isNil: Bool {
        switch self {
        case .null: true
        case .bind(let bind): (bind as? any AnyOptionalType).map { $0.wrappedValue == nil } ?? false
        default: false
        }
    }
}
