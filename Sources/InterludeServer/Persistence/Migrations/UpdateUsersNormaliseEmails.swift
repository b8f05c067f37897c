import Fluent
import InterludeCore

/// Addresses stored before domains were kept in their ASCII (IDNA) form are rewritten to it, so a sign-in with
/// either spelling finds the account. An address whose new form another account already holds stays as it was.
struct UpdateUsersNormaliseEmails: AsyncMigration {
    func prepare(on database: any Database) async throws {
        let users = try await UserRecord.query(on: database).all()
        var taken = Set(users.map(\.email))
        for user in users {
            guard let normalised = EmailAddress(user.email)?.value, normalised != user.email,
                !taken.contains(normalised)
            else { continue }
            taken.insert(normalised)
            user.email = normalised
            try await user.save(on: database)
        }
    }

    func revert(on database: any Database) async throws {}
}
