import Fluent
import Foundation

/// One failed attempt counted toward a rate limit; `key` is a keyed hash, never an address or email in clear.
final class RateLimitEventRecord: Model, @unchecked Sendable {
    static let schema = "rate_limit_events"

    // managed
    @ID(key: .id) var id: UUID?

    // data
    @Field(key: "scope") var scope: RateLimiter.Scope
    @Field(key: "key") var key: String
    @Field(key: "occurred_at") var occurredAt: Date

    /// Listed here so Fluent need not find them by reflection on every row (PropertyListTests keeps it whole).
    var properties: [any AnyProperty] { [$id, $scope, $key, $occurredAt] }

    init() {}

    init(scope: RateLimiter.Scope, key: String, occurredAt: Date) {
        self.scope = scope
        self.key = key
        self.occurredAt = occurredAt
    }
}
