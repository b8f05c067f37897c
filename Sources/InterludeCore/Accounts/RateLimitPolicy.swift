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
    /// New accounts per client.
    public static let registration = RateLimitPolicy(limit: 10, window: 60 * 60)
    /// Questions whether an address has an account, per client.
    public static let emailAvailability = RateLimitPolicy(limit: 30, window: 15 * 60)
    /// Wrong study join passwords, per client and per patient and study.
    public static let studyJoin = RateLimitPolicy(limit: 5, window: 15 * 60)
    /// Invitations by email, per therapist.
    public static let invitations = RateLimitPolicy(limit: 50, window: 24 * 60 * 60)
    /// Wrong passwords given again by someone signed in (to delete the account, change the password, turn off
    /// two-factor), per account: a stolen session must not become a way to guess the password.
    public static let reverification = RateLimitPolicy(limit: 5, window: 15 * 60)

    /// nil when another attempt is allowed now; otherwise the whole seconds until it is.
    public func retryAfter(failures: [Date], now: Date) -> Int? {
        let recent = failures.filter { $0 > now.addingTimeInterval(-window) && $0 <= now }.sorted()
        guard recent.count >= limit else { return nil }
        let freedAt = recent[recent.count - limit].addingTimeInterval(window)
        return max(1, Int((freedAt.timeIntervalSince(now)).rounded(.up)))
    }
}

/// A delay that grows with the failed attempts on one account from every client, instead of a lock: whoever
/// knows the password still gets in, only later, while guessing from many addresses slows to a crawl.
public struct SlowDownPolicy: Sendable, Equatable {
    public var freeAttempts: Int
    public var window: TimeInterval
    public var longestDelay: TimeInterval

    public init(freeAttempts: Int, window: TimeInterval, longestDelay: TimeInterval) {
        self.freeAttempts = freeAttempts
        self.window = window
        self.longestDelay = longestDelay
    }

    public static let login = SlowDownPolicy(freeAttempts: 10, window: 15 * 60, longestDelay: 10)

    /// Seconds to wait before the next attempt is checked: nothing within the free attempts, then half a second
    /// doubling with each further failure, up to `longestDelay`.
    public func delay(failures: [Date], now: Date) -> TimeInterval {
        let recent = failures.filter { $0 > now.addingTimeInterval(-window) && $0 <= now }.count
        let beyond = recent - freeAttempts
        guard beyond > 0 else { return 0 }
        return min(longestDelay, 0.5 * pow(2, Double(min(beyond - 1, 30))))
    }
}
