import Fluent
import Foundation
import SQLKit

/// Alert and rule-firing reasons and stored scores say how a person is doing ("item phq9_9 = 2"), so they are
/// sealed at rest like answers. Rows written before are sealed here; a sealed value is recognised by its prefix, so
/// the step can run again without harm.
struct UpdateSealHealthData: AsyncMigration {
    let cipher: FieldCipher

    static let columns: [(table: String, column: String)] = [
        (AlertRecord.schema, "reason"), (RuleFiringRecord.schema, "reason"), (ResponseRecord.schema, "scores"),
    ]

    func prepare(on database: any Database) async throws {
        let sql = database as! any SQLDatabase
        for (table, column) in Self.columns {
            let rows = try await sql.select().column("id").column(column).from(table)
                .where(column, .notLike, SQLBind(FieldCipher.prefix + "%")).all()
            for row in rows {
                let id = try row.decode(column: "id", as: UUID.self)
                let plain = try row.decode(column: column, as: String.self)
                try await sql.update(table).set(column, to: SQLBind(try cipher.seal(plain)))
                    .where("id", .equal, SQLBind(id)).run()
            }
        }
    }

    func revert(on database: any Database) async throws {}
}
