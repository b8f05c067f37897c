import FluentKit
import FluentSQL
import NIOCore
import SQLKit

/// Runs Fluent's model queries on SQLite as the SQLite driver does, with two costs taken out of every query:
/// identifiers are written in plain double quotes (SQLKit escapes each one through a generic string search, about a
/// tenth of a busy server's time), and a row's columns are named without building a field key for each value.
///
/// Only model queries take this way: their tables and columns are names written in the models, never text from
/// outside. Statements written with SQLKit keep SQLite's own dialect.
struct SQLiteModelQueries: Database, SQLDatabase {
    let base: any Database & SQLDatabase
    /// Read once: SQLKit asks for it at every identifier and value it writes.
    let dialect: any SQLDialect

    init(_ base: any Database) {
        self.base = base as! any Database & SQLDatabase
        self.dialect = PlainQuoting(base: self.base.dialect)
    }

    var context: DatabaseContext { base.context }
    var inTransaction: Bool { base.inTransaction }

    func execute(query: DatabaseQuery, onOutput: @escaping @Sendable (any DatabaseOutput) -> Void) -> EventLoopFuture<Void> {
        var serializer = SQLSerializer(database: self)
        Self.statement(query).serialize(to: &serializer)
        return base.execute(sql: Written(sql: serializer.sql, binds: serializer.binds)) {
            onOutput(ModelRow(row: $0, prefix: ""))
        }
    }

    /// The statement the SQLite driver makes of a model query.
    static func statement(_ query: DatabaseQuery) -> any SQLExpression {
        let statement = SQLQueryConverter(delegate: SQLiteModelConverter()).convert(query)
        // A created row reports its id back.
        guard case .create = query.action, query.customIDKey != .some(.string("")) else { return statement }
        return SQLKit.SQLList([statement, SQLReturning(.init((query.customIDKey ?? .id).description))], separator: SQLRaw(" "))
    }

    func execute(schema: DatabaseSchema) -> EventLoopFuture<Void> {
        base.execute(schema: schema)
    }

    func execute(enum: DatabaseEnum) -> EventLoopFuture<Void> {
        base.execute(enum: `enum`)
    }

    func transaction<T>(_ closure: @escaping @Sendable (any Database) -> EventLoopFuture<T>) -> EventLoopFuture<T> {
        base.transaction { closure(SQLiteModelQueries($0)) }
    }

    func withConnection<T>(_ closure: @escaping @Sendable (any Database) -> EventLoopFuture<T>) -> EventLoopFuture<T> {
        base.withConnection { closure(SQLiteModelQueries($0)) }
    }

    // SQLDatabase: statements written with SQLKit go to the driver unchanged.

    var logger: Logger { base.logger }
    var eventLoop: any EventLoop { base.eventLoop }
    var version: (any SQLDatabaseReportedVersion)? { base.version }
    var queryLogLevel: Logger.Level? { base.queryLogLevel }

    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void) -> EventLoopFuture<Void> {
        base.execute(sql: query, onRow)
    }

    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void) async throws {
        try await base.execute(sql: query, onRow)
    }

    func withSession<R>(_ closure: @escaping @Sendable (any SQLDatabase) async throws -> R) async throws -> R {
        try await base.withSession(closure)
    }
}

/// A statement already written out, with its values.
private struct Written: SQLExpression {
    let sql: String
    let binds: [any Encodable & Sendable]

    func serialize(to serializer: inout SQLSerializer) {
        serializer.write(sql)
        serializer.binds.append(contentsOf: binds)
    }
}

/// SQLite's types, as the driver maps them.
private struct SQLiteModelConverter: SQLConverterDelegate {
    func customDataType(_ dataType: DatabaseSchema.DataType) -> (any SQLExpression)? {
        switch dataType {
        case .string, .enum: SQLRaw("TEXT")
        case .datetime: SQLRaw("REAL")
        case .int64: SQLRaw("INTEGER")
        default: nil
        }
    }
}

/// A row as Fluent reads it; a joined model's columns carry its table's name and `_` in front.
private struct ModelRow: DatabaseOutput {
    let row: any SQLRow
    let prefix: String

    var description: String { String(describing: row) }

    func schema(_ schema: String) -> any DatabaseOutput {
        ModelRow(row: row, prefix: schema + "_")
    }

    func contains(_ key: FieldKey) -> Bool {
        row.contains(column: prefix + key.description)
    }

    func decodeNil(_ key: FieldKey) throws -> Bool {
        try row.decodeNil(column: prefix + key.description)
    }

    func decode<T: Decodable>(_ key: FieldKey, as: T.Type) throws -> T {
        try row.decode(column: prefix + key.description, as: T.self)
    }
}

/// The base dialect, but identifiers in plain double quotes: the quote is no `SQLRaw`, so SQLKit writes it around
/// the name as it is.
private struct PlainQuoting: SQLDialect {
    let base: any SQLDialect

    private struct DoubleQuote: SQLExpression {
        func serialize(to serializer: inout SQLSerializer) { serializer.write("\"") }
    }

    var name: String { base.name }
    var identifierQuote: any SQLExpression { DoubleQuote() }
    var literalStringQuote: any SQLExpression { base.literalStringQuote }
    var supportsAutoIncrement: Bool { base.supportsAutoIncrement }
    var autoIncrementClause: any SQLExpression { base.autoIncrementClause }
    var autoIncrementFunction: (any SQLExpression)? { base.autoIncrementFunction }
    func bindPlaceholder(at position: Int) -> any SQLExpression { base.bindPlaceholder(at: position) }
    func literalBoolean(_ value: Bool) -> any SQLExpression { base.literalBoolean(value) }
    var literalDefault: any SQLExpression { base.literalDefault }
    var supportsIfExists: Bool { base.supportsIfExists }
    var enumSyntax: SQLEnumSyntax { base.enumSyntax }
    var supportsDropBehavior: Bool { base.supportsDropBehavior }
    var supportsReturning: Bool { base.supportsReturning }
    var triggerSyntax: SQLTriggerSyntax { base.triggerSyntax }
    var alterTableSyntax: SQLAlterTableSyntax { base.alterTableSyntax }
    func customDataType(for dataType: SQLDataType) -> (any SQLExpression)? { base.customDataType(for: dataType) }
    func normalizeSQLConstraint(identifier: any SQLExpression) -> any SQLExpression {
        base.normalizeSQLConstraint(identifier: identifier)
    }
    var upsertSyntax: SQLUpsertSyntax { base.upsertSyntax }
    var unionFeatures: SQLUnionFeatures { base.unionFeatures }
    var sharedSelectLockExpression: (any SQLExpression)? { base.sharedSelectLockExpression }
    var exclusiveSelectLockExpression: (any SQLExpression)? { base.exclusiveSelectLockExpression }
    func nestedSubpathExpression(in column: any SQLExpression, for path: [String]) -> (any SQLExpression)? {
        base.nestedSubpathExpression(in: column, for: path)
    }
}
