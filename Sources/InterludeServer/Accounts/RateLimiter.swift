import Fluent
import Foundation
import InterludeCore

/// Counts failed attempts per account and per client in the database, so every server process sees the same
/// counts; subjects are stored only as keyed hashes.
struct RateLimiter: Sendable {
    enum Scope: String, Sendable {
        case login
        case pairing
        case verification
        case emailRequest

        var policy: RateLimitPolicy {
            switch self {
            case .login: return .login
            case .pairing: return .pairing
            case .verification: return .verification
            case .emailRequest: return .emailRequests
            }
        }
    }

    /// Who an attempt is counted against: an account (by email or id) or a client (by network address).
    struct Subject: Sendable, Hashable {
        let raw: String

        static func account(email: String) -> Subject { Subject(raw: "email:\(email.lowercased())") }
        static func account(id: UUID) -> Subject { Subject(raw: "user:\(id.uuidString.lowercased())") }
        static func client(_ address: String) -> Subject { Subject(raw: "client:\(address)") }
    }

    let database: any Database
    let services: AppServices

    /// Throws `rateLimited` with the longest wait of any subject that has used up its attempts.
    func ensureAllowed(_ scope: Scope, _ subjects: [Subject]) async throws {
        let now = services.clock.now
        var longestWait: Int?
        for subject in subjects {
            let key = try await digest(subject, now: now)
            let failures = try await RateLimitEventRecord.query(on: database)
                .filter(\.$scope == scope.rawValue)
                .filter(\.$key == key)
                .filter(\.$occurredAt > now.addingTimeInterval(-scope.policy.window))
                .all()
                .map(\.occurredAt)
            if let wait = scope.policy.retryAfter(failures: failures, now: now) {
                longestWait = max(longestWait ?? 0, wait)
            }
        }
        if let longestWait { throw AppError.rateLimited(retryAfter: longestWait) }
    }

    func recordFailure(_ scope: Scope, _ subjects: [Subject]) async throws {
        let now = services.clock.now
        for subject in subjects {
            let key = try await digest(subject, now: now)
            try await RateLimitEventRecord(scope: scope.rawValue, key: key, occurredAt: now).create(on: database)
        }
        try await RateLimitEventRecord.query(on: database)
            .filter(\.$occurredAt < now.addingTimeInterval(-Self.longestWindow))
            .delete()
    }

    /// Forgets the failures of `subject`, after it proved itself (a successful sign-in).
    func clear(_ scope: Scope, _ subject: Subject) async throws {
        let key = try await digest(subject, now: services.clock.now)
        try await RateLimitEventRecord.query(on: database)
            .filter(\.$scope == scope.rawValue)
            .filter(\.$key == key)
            .delete()
    }

    /// Removes every count kept about an account, when it is erased.
    func forget(_ subjects: [Subject]) async throws {
        let now = services.clock.now
        var keys: [String] = []
        for subject in subjects { keys.append(try await digest(subject, now: now)) }
        try await RateLimitEventRecord.query(on: database).filter(\.$key ~~ keys).delete()
    }

    private func digest(_ subject: Subject, now: Date) async throws -> String {
        try await services.serverSecret.digest(subject.raw, on: database, now: now)
    }

    private static let longestWindow: TimeInterval = [Scope.login, .pairing, .verification, .emailRequest]
        .map(\.policy.window).max()!
}
