import Fluent
import Foundation
import InterludeCore

/// What was sent to a person, and the taps on it.
struct NotificationHistory: Sendable {
    let database: any Database
    let services: AppServices

    /// The newest notifications of a person, newest first.
    func recent(of userID: UUID) async throws -> [NotificationRecord] {
        try await NotificationRecord.query(on: database)
            .filter(\.$user.$id == userID)
            .sort(\.$dueAt, .descending)
            .all()
    }

    /// Records a tap, if `key` is the one that came with the notification; a second tap changes nothing.
    func recordClick(_ id: UUID, key: String) async throws {
        let now = services.clock.now
        let expected = try await NotificationDispatcher.clickKey(for: id, services: services, on: database, now: now)
        guard key == expected, let notification = try await NotificationRecord.find(id, on: database) else {
            throw AppError.notFound
        }
        guard notification.clickedAt == nil else { return }
        notification.clickedAt = now
        notification.status = .clicked
        try await notification.save(on: database)
    }
}
