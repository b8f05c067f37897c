import Fluent
import Foundation
import InterludeCore
import SQLKit

/// Addresses stored before domains were kept in their ASCII (IDNA) form are rewritten to it, so a sign-in with
/// either spelling finds the account. An address whose new form another account already holds stays as it was.
struct UpdateUsersNormaliseEmails: AsyncMigration {
    func prepare(on database: any Database) async throws {
        let sql = database as! any SQLDatabase
        let users = try await sql.select().column("id").column("email").from(UserRecord.schema).all()
            .map {
                (id: try $0.decode(column: "id", as: UUID.self), email: try $0.decode(column: "email", as: String.self))
            }
        var taken = Set(users.map(\.email))
        for user in users {
            guard let normalised = EmailAddress(user.email)?.value, normalised != user.email,
                !taken.contains(normalised)
            else { continue }
            taken.insert(normalised)
            try await sql.update(UserRecord.schema).set("email", to: SQLBind(normalised))
                .where("id", .equal, SQLBind(user.id)).run()
        }
    }

    func revert(on database: any Database) async throws {}
}
