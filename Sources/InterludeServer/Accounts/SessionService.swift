import Fluent
import Foundation
import InterludeCore
import Vapor

/// Signing in and out: bearer tokens for the API, cookies for the console.
struct SessionService: Sendable {
    let database: any Database
    let services: AppServices

    private var now: Date { services.clock.now }
    private var rateLimiter: RateLimiter { RateLimiter(database: database, services: services) }

    /// Who is signed in, and through which session.
    struct Authenticated: Sendable {
        let user: UserRecord
        let session: Session
    }

    /// What is asked of the session a request came by. Read from the sign-in check's row as it stands, without
    /// building the session's model, which cost every signed-in request a hundredth of a submission.
    struct Session: Sendable {
        let id: UUID
        let expiresAt: Date
        /// The token the console's forms post back; nil for the API.
        let csrfToken: String?
    }

    /// Checks an email and password. Failures lock out per account-and-client and per client, so failures sent by
    /// others from elsewhere never lock the owner out; failures on the account from every client slow its next
    /// sign-ins down instead. A wrong address and a wrong password look the same to the caller. An account with
    /// two-factor sign-in also needs a current `code`; a wrong one counts as a failure like a wrong password.
    func checkCredentials(
        email raw: String, password: String, code: String? = nil, console: Bool = false, client: RateLimiter.Subject
    ) async throws -> UserRecord {
        let email = EmailAddress(raw)?.value ?? raw.trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
        let subjects: [RateLimiter.Subject] = [.account(email: email, at: client), client]
        try await rateLimiter.ensureAllowed(.login, subjects)
        let delay = try await rateLimiter.loginDelay(.account(email: email))
        if delay > 0 { await services.clock.sleep(delay) }
        guard !email.isEmpty, email.count <= EmailAddress.maxLength,
            let user = try await UserRecord.query(on: database).filter(\.$email == email).first()
        else {
            try await services.passwords.verifyAgainstNothing(password)
            try await recordFailure(email: email, subjects)
            throw AppError.invalidCredentials
        }
        guard try await services.passwords.verify(password, against: user.passwordHash) else {
            try await recordFailure(email: email, subjects)
            throw AppError.invalidCredentials
        }
        do {
            try await TwoFactorService(database: database, services: services).checkSignIn(
                user, code: code, console: console)
        } catch AppError.validation(let errors) {
            try await recordFailure(email: email, subjects)
            throw AppError.validation(errors)
        }
        try await rateLimiter.clear(.login, .account(email: email, at: client))
        return user
    }

    private func recordFailure(email: String, _ subjects: [RateLimiter.Subject]) async throws {
        try await rateLimiter.recordFailure(.login, subjects)
        try await rateLimiter.recordFailure(.loginSlowDown, [.account(email: email)])
    }

    /// Signs in for the API; refuses unverified and deactivated accounts after the password proved right.
    func login(email: String, password: String, code: String?, client: RateLimiter.Subject) async throws
        -> (SecretToken, Authenticated)
    {
        let user = try await checkCredentials(email: email, password: password, code: code, client: client)
        guard user.deactivatedAt == nil else { throw AppError.forbidden(.accountDeactivated) }
        guard user.emailVerifiedAt != nil else { throw AppError.forbidden(.emailNotVerified) }
        return try await open(.api, for: user, lifetime: AccountLifetimes.apiSession)
    }

    /// Signs in for the API an account whose owner just proved who they are another way (an invitation's link).
    func openAPISession(for user: UserRecord) async throws -> (SecretToken, Authenticated) {
        try await open(.api, for: user, lifetime: AccountLifetimes.apiSession)
    }

    /// Signs a staff member in to the console.
    func consoleLogin(email: String, password: String, code: String?, client: RateLimiter.Subject) async throws
        -> (SecretToken, Authenticated)
    {
        let user = try await checkCredentials(
            email: email, password: password, code: code, console: true, client: client)
        guard user.deactivatedAt == nil else { throw AppError.forbidden(.accountDeactivated) }
        guard user.role.isStaff else { throw AppError.forbidden(.notAllowed) }
        return try await open(.console, for: user, lifetime: AccountLifetimes.consoleSession)
    }

    private func open(_ kind: SessionRecord.Kind, for user: UserRecord, lifetime: TimeInterval) async throws
        -> (SecretToken, Authenticated)
    {
        let token = SecretToken.generate()
        let now = self.now
        let session = SessionRecord(
            userID: try user.requireID(), kind: kind, tokenHash: token.hash,
            csrfToken: kind == .console ? SecretToken.generate().value : nil,
            expiresAt: now.addingTimeInterval(lifetime), now: now)
        try await session.create(on: database)
        user.lastActiveAt = now
        try await user.save(on: database)
        let opened = Session(id: try session.requireID(), expiresAt: session.expiresAt, csrfToken: session.csrfToken)
        return (token, Authenticated(user: user, session: opened))
    }

    /// The account behind a token, or nil when the token is unknown, expired, or its account deactivated.
    func authenticate(token: String, kind: SessionRecord.Kind) async throws -> Authenticated? {
        guard !token.isEmpty, token.count <= 200 else { return nil }
        let now = self.now
        guard
            let live = try await Statements.liveSession(
                tokenHash: SecretToken.hash(token), kind: kind, at: now, on: database)
        else { return nil }
        let user = live.user
        guard user.deactivatedAt == nil else { return nil }
        var expiresAt = live.expiresAt
        // Record activity at most every few minutes, to keep reads cheap.
        if now.timeIntervalSince(live.lastUsedAt) > Self.activityResolution {
            if kind == .console { expiresAt = now.addingTimeInterval(AccountLifetimes.consoleSession) }
            try await Statements.touchSession(live.id, usedAt: now, expiresAt: expiresAt, on: database)
            user.lastActiveAt = now
            try await user.save(on: database)
        }
        let session = Session(id: live.id, expiresAt: expiresAt, csrfToken: live.csrfToken)
        return Authenticated(user: user, session: session)
    }

    func logout(_ session: Session) async throws {
        try await SessionRecord.query(on: database).filter(\.$id == session.id).delete()
    }

    static let activityResolution: TimeInterval = 300
}
