import Fluent
import Foundation

/// A person changing how their own account is protected (two-factor sign-in), and the one way such changes are
/// written to the audit log.
struct OwnAccount: Sendable {
    let user: UserRecord
    let services: AppServices

    /// Records a change, in the transaction that makes it.
    func record(_ action: AuditAction, on database: any Database) async throws {
        try await AuditLog(database: database, services: services).record(actor: user, action: action, target: nil)
    }
}
