import FluentKit
import Foundation
import SQLKit

extension Statements {
    /// A session that has not expired, with its account, as the sign-in check reads it.
    struct LiveSession {
        let id: UUID
        let csrfToken: String?
        let expiresAt: Date
        let lastUsedAt: Date
        let user: UserRecord
    }

    /// The session of a token's hash and kind that is still valid at `now`, with its account: one statement, as it
    /// runs before every signed-in request.
    static func liveSession(
        tokenHash: String, kind: SessionRecord.Kind, at now: Date, on database: any Database
    ) async throws -> LiveSession? {
        guard
            let row = try await sql(database).raw(
                """
                SELECT s.id AS s_id, s.csrf_token AS s_csrf_token, s.expires_at AS s_expires_at, \
                s.last_used_at AS s_last_used_at, u.* FROM sessions s JOIN users u ON u.id = s.user_id \
                WHERE s.token_hash = \(bind: tokenHash) AND s.kind = \(bind: kind.rawValue) \
                AND s.expires_at > \(bind: now)
                """
            ).first()
        else { return nil }
        return LiveSession(
            id: try row.decode(column: "s_id", as: UUID.self),
            csrfToken: try row.decode(column: "s_csrf_token", as: String?.self),
            expiresAt: try row.decode(column: "s_expires_at", as: Date.self),
            lastUsedAt: try row.decode(column: "s_last_used_at", as: Date.self),
            user: try row.model(UserRecord.self))
    }

    /// Records a session's use and its new end.
    static func touchSession(_ id: UUID, usedAt now: Date, expiresAt: Date, on database: any Database) async throws {
        try await sql(database).raw(
            "UPDATE sessions SET last_used_at = \(bind: now), expires_at = \(bind: expiresAt) WHERE id = \(bind: id)"
        ).run()
    }
}
