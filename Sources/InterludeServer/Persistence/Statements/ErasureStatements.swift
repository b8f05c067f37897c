import FluentKit
import Foundation
import SQLKit

extension Statements {
    /// The ids of every row of a table with personal data (see `ErasureMap.personalTables`).
    static func rowIDs(of table: String, on database: any Database) async throws -> [UUID] {
        try await sql(database).select().column("id").from(table).all().compactMap {
            try? $0.decode(column: "id", as: UUID.self)
        }
    }

    /// Deletes the rows `ids` of a table with personal data.
    static func deleteRows(_ ids: [UUID], of table: String, on database: any Database) async throws {
        try await sql(database).delete(from: table).where("id", .in, ids).run()
    }
}
