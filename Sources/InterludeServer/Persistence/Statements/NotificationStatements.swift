import FluentKit
import Foundation
import InterludeCore
import SQLKit

extension Statements {
    /// Queues notifications in one statement, passing over a dedupe key queued before; the number queued.
    static func insertNotifications(_ items: [NotificationOutbox.Item], at now: Date, on database: any Database)
        async throws -> Int
    {
        guard !items.isEmpty else { return 0 }
        var builder = sql(database).insert(into: NotificationRecord.schema).columns(
            "id", "created_at", "user_id", "prompt_id", "appointment_id", "category", "dedupe_key", "title", "body",
            "path", "due_at", "expires_at", "status", "attempts", "next_attempt_at")
        for item in items {
            builder = builder.values([
                SQLBind(UUID()), SQLBind(now), SQLBind(item.userID), SQLBind(item.promptID),
                SQLBind(item.appointmentID),
                SQLBind(item.category.rawValue), SQLBind(item.dedupeKey), SQLBind(item.title), SQLBind(item.body),
                SQLBind(item.path), SQLBind(item.dueAt), SQLBind(item.expiresAt),
                SQLBind(NotificationStatus.queued.rawValue), SQLBind(0), SQLBind(item.dueAt),
            ])
        }
        return try await builder.ignoringConflicts().returning("id").all().count
    }

    /// Leases those of `ids` still queued and held by no one until `until`; the ids it took. Of dispatchers claiming
    /// at once, each notification goes to one.
    static func claimNotifications(_ ids: [UUID], until: Date, now: Date, on database: any Database) async throws
        -> Set<UUID>
    {
        let rows = try await claiming(ids, until: until, now: now, on: database).all()
        return Set(try rows.map { try $0.decode(column: "id", as: UUID.self) })
    }

    /// A claim's statement (see `claimNotifications`), answering the ids it took.
    static func claiming(_ ids: [UUID], until: Date, now: Date, on database: any Database) -> SQLReturningResultBuilder<
        SQLUpdateBuilder
    > {
        let sql = sql(database)
        let queued = SQLBinaryExpression(SQLColumn("status"), .equal, SQLBind(NotificationStatus.queued.rawValue))
        return sql.update(NotificationRecord.schema)
            .set("claimed_until", to: SQLBind(until))
            .where("id", .in, SQLBind.group(ids))
            // Without statistics SQLite takes the status for the more selective condition and walks every queued
            // notification of the (status, next attempt) index: a claim then costs as much as the outbox is long.
            // Told that most rows it meets are queued, it finds the few by their keys.
            .where(
                sql.dialect.name == "sqlite"
                    ? SQLFunction("likelihood", args: queued, SQLLiteral.numeric("0.9")) : queued
            )
            .where(group: {
                $0.where("claimed_until", .is, SQLLiteral.null).orWhere("claimed_until", .lessThanOrEqual, SQLBind(now))
            })
            .returning("id")
    }
}
