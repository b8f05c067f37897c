import Fluent
import Foundation
import SQLKit

extension Database {
    /// Changes one row only while it is still in the state the caller saw (`condition`), and says whether this call
    /// made the change. The database decides, so of two parallel requests exactly one wins, where reading the row,
    /// checking it and saving it would let both.
    func updateRow(
        _ schema: String, id: UUID, set values: KeyValuePairs<String, any SQLExpression>,
        if condition: (SQLUpdateBuilder) -> SQLUpdateBuilder
    ) async throws -> Bool {
        try await updateRow(schema, id: id, set: values.map { ($0.key, $0.value) }, if: condition)
    }

    /// `updateRow` with the columns to set put together by the caller.
    func updateRow(
        _ schema: String, id: UUID, set values: [(String, any SQLExpression)],
        if condition: (SQLUpdateBuilder) -> SQLUpdateBuilder
    ) async throws -> Bool {
        let builder = Statements.sql(self).update(schema).where("id", .equal, SQLBind(id))
        for (column, value) in values { builder.set(SQLIdentifier(column), to: value) }
        return try await !condition(builder).returning("id").all().isEmpty
    }

    /// Deletes the row `id` only if `condition` holds; true when it did.
    func deleteRow(_ schema: String, id: UUID, if condition: (SQLDeleteBuilder) -> SQLDeleteBuilder) async throws
        -> Bool
    {
        let builder = Statements.sql(self).delete(from: schema).where("id", .equal, SQLBind(id))
        return try await !condition(builder).returning("id").all().isEmpty
    }
}
