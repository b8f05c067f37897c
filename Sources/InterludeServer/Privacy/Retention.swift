import Fluent
import Foundation
import InterludeCore

/// Deletes by age what has served its purpose, with the periods of `Settings.Retention`: expired sessions, email
/// links and access tokens, old rate-limit counts, the texts of notifications long sent, the answers kept for
/// repeated sync uploads, outbox mail files, audit events older than the audit period, and the identifying data of
/// people who took part only in research studies closed longer than their retention period. Research exports go
/// by `EXPORT_RETENTION_DAYS` in the export job.
struct Retention: Sendable {
    let database: any Database
    let services: AppServices

    struct Report: Sendable, Equatable {
        var sessions = 0
        var emailTokens = 0
        var accessTokens = 0
        var rateLimitEvents = 0
        var notificationTexts = 0
        var syncMutations = 0
        var outboxFiles = 0
        var auditEvents = 0
        var forgottenParticipants = 0
        var abandonedImports = 0
    }

    func run() async throws -> Report {
        let now = services.clock.now
        let periods = services.settings.retention
        let day: TimeInterval = 86_400
        let expiredBefore = now.addingTimeInterval(-Double(periods.expiredDays) * day)
        var report = Report()
        report.sessions = try await delete(SessionRecord.query(on: database).filter(\.$expiresAt < expiredBefore))
        report.emailTokens = try await delete(EmailTokenRecord.query(on: database).filter(\.$expiresAt < expiredBefore))
        report.accessTokens = try await delete(
            AccessTokenRecord.query(on: database).filter(\.$expiresAt < expiredBefore))
        report.rateLimitEvents = try await delete(
            RateLimitEventRecord.query(on: database).filter(
                \.$occurredAt < now.addingTimeInterval(-RateLimiter.longestWindow)))
        report.notificationTexts = try await blankNotifications(
            before: now.addingTimeInterval(-Double(periods.notificationDays) * day))
        report.syncMutations = try await delete(
            SyncMutationRecord.query(on: database).filter(
                \.$createdAt < now.addingTimeInterval(-Double(periods.syncDays) * day)))
        report.outboxFiles = OutboxMail(services: services).remove(
            olderThan: now.addingTimeInterval(-Double(periods.outboxDays) * day))
        var auditCutoff = Calendar(identifier: .gregorian)
        auditCutoff.timeZone = .gmt
        if let before = auditCutoff.date(byAdding: .year, value: -periods.auditYears, to: now) {
            report.auditEvents = try await delete(AuditEventRecord.query(on: database).filter(\.$occurredAt < before))
        }
        report.forgottenParticipants = try await ClosedStudyRetention(database: database, services: services).run(
            now: now)
        report.abandonedImports = try await HealthImportService(database: database, services: services).abandon(
            idleSince: now.addingTimeInterval(-HealthImportService.abandonedAfter))
        return report
    }

    /// Deletes what `query` finds; how many rows.
    private func delete<M: Model>(_ query: QueryBuilder<M>) async throws -> Int {
        let count = try await query.copy().count()
        if count > 0 { try await query.delete() }
        return count
    }

    /// Notifications settled (sent, clicked, failed, withheld or expired) before `cutoff` keep when and how they went,
    /// not what they said.
    private func blankNotifications(before cutoff: Date) async throws -> Int {
        let settled: [NotificationStatus] = [.sent, .clicked, .failed, .withheld, .expired]
        let query = NotificationRecord.query(on: database)
            .filter(\.$status ~~ settled).filter(\.$dueAt < cutoff)
            .group(.or) { $0.filter(\.$title != "").filter(\.$body != "") }
        let count = try await query.copy().count()
        if count > 0 { try await query.set(\.$title, to: "").set(\.$body, to: "").update() }
        return count
    }
}
