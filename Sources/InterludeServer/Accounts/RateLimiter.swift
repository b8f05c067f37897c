import Fluent
import Foundation
import InterludeCore

/// Counts failed attempts per account and per client in the database, so every server process sees the same
/// counts; subjects are stored only as keyed hashes.
struct RateLimiter: Sendable {
    enum Scope: String, Sendable, Codable, CaseIterable {
        case login
        case pairing
        case verification
        case emailRequest
        case registration
        case emailAvailability
        case studyJoin
        /// Invitations a therapist sends by email.
        case invitation
        /// Failed sign-ins on an account from every client, which slow its sign-ins down rather than lock it.
        case loginSlowDown
        /// Wrong passwords given again while signed in.
        case reverification

        var policy: RateLimitPolicy {
            switch self {
            case .login: return .login
            case .pairing: return .pairing
            case .verification: return .verification
            case .emailRequest: return .emailRequests
            case .registration: return .registration
            case .emailAvailability: return .emailAvailability
            case .studyJoin: return .studyJoin
            case .invitation: return .invitations
            case .loginSlowDown: return RateLimitPolicy(limit: .max, window: SlowDownPolicy.login.window)
            case .reverification: return .reverification
            }
        }
    }

    /// Who an attempt is counted against: an account (by email or id) or a client (by network address).
    struct Subject: Sendable, Hashable {
        let raw: String

        static func account(email: String) -> Subject { Subject(raw: "email:\(email.lowercased())") }
        static func account(id: UUID) -> Subject { Subject(raw: "user:\(id.lowercasedText)") }
        static func client(_ address: String) -> Subject { Subject(raw: "client:\(address)") }
        /// An account as tried from one client: others' failures elsewhere do not lock its owner out.
        static func account(email: String, at client: Subject) -> Subject {
            Subject(raw: "email:\(email.lowercased())@\(client.raw)")
        }
        /// A patient's attempts at one study.
        static func attempts(of patient: UUID, at study: UUID) -> Subject {
            Subject(raw: "user:\(patient.lowercasedText):study:\(study.lowercasedText)")
        }
    }

    let database: any Database
    let services: AppServices

    /// Counts an attempt that is limited whether it succeeds or not (an account created, an address looked up),
    /// refusing it when the subjects have used up their attempts.
    func spend(_ scope: Scope, _ subjects: [Subject]) async throws {
        try await ensureAllowed(scope, subjects)
        try await recordFailure(scope, subjects)
    }

    /// Throws `rateLimited` with the longest wait of any subject that has used up its attempts.
    func ensureAllowed(_ scope: Scope, _ subjects: [Subject]) async throws {
        let now = services.clock.now
        var longestWait: Int?
        for subject in subjects {
            let key = try await digest(subject, now: now)
            let failures = try await RateLimitEventRecord.query(on: database)
                .filter(\.$scope == scope)
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

    /// How long to wait before checking the next sign-in on the account of `subject`.
    func loginDelay(_ subject: Subject) async throws -> TimeInterval {
        let now = services.clock.now
        let policy = SlowDownPolicy.login
        let failures = try await RateLimitEventRecord.query(on: database)
            .filter(\.$scope == Scope.loginSlowDown)
            .filter(\.$key == (try await digest(subject, now: now)))
            .filter(\.$occurredAt > now.addingTimeInterval(-policy.window))
            .all()
            .map(\.occurredAt)
        return policy.delay(failures: failures, now: now)
    }

    func recordFailure(_ scope: Scope, _ subjects: [Subject]) async throws {
        let now = services.clock.now
        for subject in subjects {
            let key = try await digest(subject, now: now)
            try await RateLimitEventRecord(scope: scope, key: key, occurredAt: now).create(on: database)
        }
        try await RateLimitEventRecord.query(on: database)
            .filter(\.$occurredAt < now.addingTimeInterval(-Self.longestWindow))
            .delete()
    }

    /// Checks the password of someone signed in once more, before a change that needs it: a wrong one is named as
    /// `field` and counts against the account, and after five in fifteen minutes the next waits.
    func reverify(_ password: String, of user: UserRecord, field: String) async throws {
        let subject = Subject.account(id: try user.requireID())
        try await ensureAllowed(.reverification, [subject])
        guard try await services.passwords.verify(password, against: user.passwordHash) else {
            try await recordFailure(.reverification, [subject])
            throw AppError.field(field, .mismatch)
        }
    }

    /// Forgets the failures of `subject`, after it proved itself (a successful sign-in).
    func clear(_ scope: Scope, _ subject: Subject) async throws {
        let key = try await digest(subject, now: services.clock.now)
        try await RateLimitEventRecord.query(on: database)
            .filter(\.$scope == scope)
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

    static let longestWindow: TimeInterval = Scope.allCases.map(\.policy.window).max() ?? 3600
}
