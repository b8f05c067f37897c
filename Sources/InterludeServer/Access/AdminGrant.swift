import Fluent
import Foundation
import InterludeCore

/// Proof that a person administers the installation, and the one way administrative changes (accounts, site texts)
/// are written to the audit log.
struct AdminGrant: Sendable {
    let admin: UserRecord
    let services: AppServices

    /// Refuses (forbidden) anyone but an administrator.
    init(_ user: UserRecord, services: AppServices) throws {
        guard user.role == .admin else { throw AppError.forbidden(.notAllowed) }
        admin = user
        self.services = services
    }

    /// Records a change, in the transaction that makes it when one is given.
    func record(_ action: AuditAction, target: String, on database: any Database) async throws {
        try await AuditLog(database: database, services: services).record(actor: admin, action: action, target: target)
    }
}
