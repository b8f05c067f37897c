import FluentKit
import SQLKit

extension SQLRow {
    /// The model a row of a statement written out holds, its columns named `prefix` + field key; the model reads as
    /// one Fluent fetched, so saving it updates its row. For the paths phones use most (the sign-in check, the sync,
    /// a submission): Fluent's query builder makes and reflects on throwaway models and converts the query for each
    /// statement, which costs more than the statement itself.
    func model<M: Model>(_ type: M.Type, prefix: String = "") throws -> M {
        let model = M()
        try model.output(from: PrefixedRowOutput(row: self, prefix: prefix))
        return model
    }
}

/// A row's columns named `prefix` + field key, as Fluent reads a model's fields.
private struct PrefixedRowOutput: DatabaseOutput {
    let row: any SQLRow
    let prefix: String

    var description: String { "\(row.allColumns)" }

    func schema(_ schema: String) -> any DatabaseOutput { self }

    private func column(_ key: FieldKey) -> String { prefix.isEmpty ? key.description : prefix + key.description }

    func contains(_ key: FieldKey) -> Bool { row.contains(column: column(key)) }

    func decodeNil(_ key: FieldKey) throws -> Bool { try row.decodeNil(column: column(key)) }

    func decode<T: Decodable>(_ key: FieldKey, as type: T.Type) throws -> T {
        try row.decode(column: column(key), as: type)
    }
}

extension Database {
    /// The models a statement written out reads, each filled from its row (see `SQLRow.model`).
    func models<M: Model>(_ type: M.Type, _ query: SQLQueryString) async throws -> [M] {
        try await Statements.sql(self).raw(query).all().map { try $0.model(M.self) }
    }
}
