import Fluent
import Foundation
import InterludeCore

/// A person's request for a copy of everything Interlude holds about them: written in the background, downloaded
/// once, within a day of being ready.
final class SelfExportRecord: Model, @unchecked Sendable {
    static let schema = "self_exports"

    // managed
    @ID(key: .id) var id: UUID?
    @Field(key: "created_at") var createdAt: Date

    // references
    @Parent(key: "user_id") var user: UserRecord

    // data
    @Field(key: "status") var status: ExportStatus
    /// A worker holds it until then while writing; another may take it over afterwards.
    @OptionalField(key: "claimed_until") var claimedUntil: Date?
    @OptionalField(key: "finished_at") var finishedAt: Date?
    @OptionalField(key: "expires_at") var expiresAt: Date?
    @OptionalField(key: "downloaded_at") var downloadedAt: Date?
    @OptionalField(key: "size") var size: Int?

    /// Listed here so Fluent need not find them by reflection on every row (PropertyListTests keeps it whole).
    var properties: [any AnyProperty] {
        [$id, $createdAt, $user, $status, $claimedUntil, $finishedAt, $expiresAt, $downloadedAt, $size]
    }

    init() {}

    init(userID: UUID, now: Date) {
        self.$user.id = userID
        self.status = .queued
        self.createdAt = now
    }
}
