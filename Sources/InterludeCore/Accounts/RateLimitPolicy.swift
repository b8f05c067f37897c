import Foundation

/// At most `limit` failed attempts within a sliding `window`; the next attempt waits until the oldest one ages out.
public struct RateLimitPolicy: Sendable, Equatable {
    public var limit: Int
    public var window: TimeInterval

    public init(limit: Int, window: TimeInterval) {
        self.limit = limit
        self.window = window
    }

    public static let login = RateLimitPolicy(limit: 10, window: 15 * 60)
    public static let pairing = RateLimitPolicy(limit: 5, window: 15 * 60)
    public static let verification = RateLimitPolicy(limit: 10, window: 15 * 60)
    /// Emails sent on request (verification resend, password reset) per address and per client.
    public static let emailRequests = RateLimitPolicy(limit: 5, window: 60 * 60)

    /// nil when another attempt is allowed now; otherwise the whole seconds until it is.
    public func retryAfter(failures: [Date], now: Date) -> Int? {
        let recent = failures.filter { $0 > now.addingTimeInterval(-window) && $0 <= now }.sorted()
        guard recent.count >= limit else { return nil }
        let freedAt = recent[recent.count - limit].addingTimeInterval(window)
        return max(1, Int((freedAt.timeIntervalSince(now)).rounded(.up)))
    }
}
