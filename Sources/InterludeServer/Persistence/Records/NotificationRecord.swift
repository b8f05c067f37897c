import Fluent
import Foundation
import InterludeCore

/// One notification in the outbox, from queued to its end, with what the channels answered.
final class NotificationRecord: Model, @unchecked Sendable {
    static let schema = "notifications"

    // managed
    @ID(key: .id) var id: UUID?
    @Field(key: "created_at") var createdAt: Date

    // references
    @Parent(key: "user_id") var user: UserRecord
    @OptionalField(key: "prompt_id") var promptID: UUID?
    @OptionalField(key: "appointment_id") var appointmentID: UUID?

    // data
    @Field(key: "category") var category: NotificationCategory
    /// Unique: the same event never gives two notifications, across restarts and processes.
    @Field(key: "dedupe_key") var dedupeKey: String
    @Field(key: "title") var title: String
    @Field(key: "body") var body: String
    /// The page it opens, relative to the public address.
    @Field(key: "path") var path: String
    @Field(key: "due_at") var dueAt: Date
    @Field(key: "expires_at") var expiresAt: Date
    @Field(key: "status") var status: NotificationStatus
    @Field(key: "attempts") var attempts: Int
    @Field(key: "next_attempt_at") var nextAttemptAt: Date
    /// A dispatcher holds it until then; another may take it over afterwards.
    @OptionalField(key: "claimed_until") var claimedUntil: Date?
    @OptionalField(key: "channel") var channel: String?
    /// What the channel answered, or why it was not sent.
    @OptionalField(key: "receipt") var receipt: String?
    @OptionalField(key: "sent_at") var sentAt: Date?
    @OptionalField(key: "clicked_at") var clickedAt: Date?
    /// Why it ended without reaching the person; nil while queued and once sent.
    @OptionalField(key: "miss") var miss: NotificationMiss?
    /// What each channel answered on each try, as JSON (`NotificationAttempt`s, oldest first).
    @OptionalField(key: "attempt_log") var attemptLog: String?

    /// Listed here so Fluent need not find them by reflection on every row (PropertyListTests keeps it whole).
    var properties: [any AnyProperty] {
        [
            $id, $createdAt, $user, $promptID, $appointmentID, $category, $dedupeKey, $title, $body, $path, $dueAt,
            $expiresAt, $status, $attempts, $nextAttemptAt, $claimedUntil, $channel, $receipt, $sentAt, $clickedAt,
            $miss, $attemptLog,
        ]
    }

    init() {}

    init(
        userID: UUID, category: NotificationCategory, dedupeKey: String, title: String, body: String, path: String,
        dueAt: Date,
        expiresAt: Date, now: Date
    ) {
        self.$user.id = userID
        self.category = category
        self.dedupeKey = dedupeKey
        self.title = title
        self.body = body
        self.path = path
        self.dueAt = dueAt
        self.expiresAt = expiresAt
        self.status = .queued
        self.attempts = 0
        self.nextAttemptAt = dueAt
        self.createdAt = now
    }
}
