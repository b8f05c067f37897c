import SQLKit

/// Fluent's model queries name their tables and columns as written in the models, never text from outside, so
/// they are written with identifiers in plain double quotes: SQLKit escapes each quoted name through a generic
/// string search, about a tenth of a busy server's time. Statements written with SQLKit keep SQLite's dialect.
/// This is the base dialect with a quote that is no `SQLRaw`, so SQLKit writes it around the name as it is.
struct PlainQuoting: SQLDialect {
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
