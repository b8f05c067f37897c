import Fluent
import Foundation
import InterludeCore
import Vapor

/// Registration, email verification, password reset and changes to one's own account.
struct AccountService: Sendable {
    let database: any Database
    let services: AppServices
    let logger: Logger

    private var now: Date { services.clock.now }
    private var rateLimiter: RateLimiter { RateLimiter(database: database, services: services) }
    private var composer: EmailComposer {
        EmailComposer(localizer: services.localizer, publicURL: services.settings.publicURL)
    }

    // MARK: Registration

    /// Answers whether an address is free, as many times per client as the policy allows.
    func checkAvailability(_ raw: String, client: RateLimiter.Subject) async throws -> Bool {
        try await rateLimiter.spend(.emailAvailability, [client])
        return try await isEmailAvailable(raw)
    }

    func isEmailAvailable(_ raw: String) async throws -> Bool {
        var validator = FieldValidator()
        let address = AccountFields.email(raw, into: &validator)
        try validator.check()
        return try await UserRecord.query(on: database).filter(\.$email == address!.value).first() == nil
    }

    /// Creates a patient account with its profile and privacy-policy consent, and sends the verification email.
    func register(_ registration: Registration, client: RateLimiter.Subject) async throws -> UserRecord {
        try await rateLimiter.spend(.registration, [client])
        let token = SecretToken.generate()
        let user = try await createPatient(registration, verification: token)
        await deliver(composer.verification(to: user.email, token: token, language: registration.language))
        return user
    }

    /// Stores a patient account with its profile and consents. With a verification token the address waits for
    /// confirmation; without one it counts as confirmed, as for the demo accounts an operator creates.
    func createPatient(_ registration: Registration, verification token: SecretToken?) async throws -> UserRecord {
        guard try await isEmailAvailable(registration.email.value) else { throw AppError.conflict(.emailTaken) }
        let digest = try await services.passwords.hash(registration.password)
        let now = self.now
        let user = UserRecord(
            email: registration.email.value, passwordHash: digest, role: .patient,
            name: registration.name, locale: registration.language.rawValue, timeZone: registration.timeZone,
            mustChangePassword: false, now: now)
        if token == nil { user.emailVerifiedAt = now }
        do {
            try await database.atomically { database in
                try await user.create(on: database)
                let userID = try user.requireID()
                try await PatientProfiles.create(
                    userID: userID, shareWithResearch: registration.shareWithResearch, on: database)
                try await ConsentRecord(
                    userID: userID, document: .privacyPolicy, version: registration.privacyPolicyVersion,
                    grantedAt: now, method: .registration
                ).create(on: database)
                if registration.shareWithResearch {
                    try await ConsentRecord(
                        userID: userID, document: .researchSharing, version: registration.privacyPolicyVersion,
                        grantedAt: now, method: .registration
                    ).create(on: database)
                }
                if let token {
                    try await EmailTokenRecord(
                        userID: userID, purpose: .verification, tokenHash: token.hash, email: user.email,
                        expiresAt: now.addingTimeInterval(AccountLifetimes.emailVerification), now: now
                    ).create(on: database)
                }
            }
        } catch let error as any DatabaseError where error.isConstraintFailure {
            throw AppError.conflict(.emailTaken)
        }
        return user
    }

    // MARK: Verification

    func verifyEmail(token: String, client: RateLimiter.Subject) async throws -> UserRecord {
        try await rateLimiter.ensureAllowed(.verification, [client])
        let record = try await findToken(token, purpose: .verification)
        guard let record else {
            try await rateLimiter.recordFailure(.verification, [client])
            throw AppError.field("token", .invalidValue)
        }
        guard let user = try await UserRecord.find(record.$user.id, on: database) else { throw AppError.notFound }
        if record.usedAt != nil {
            throw user.emailVerifiedAt != nil
                ? AppError.conflict(.alreadyVerified) : AppError.field("token", .alreadyUsed)
        }
        guard record.expiresAt > now else { throw AppError.field("token", .expired) }
        guard record.email == user.email else { throw AppError.field("token", .invalidValue) }
        let now = self.now
        try await database.atomically { database in
            record.usedAt = now
            try await record.save(on: database)
            user.emailVerifiedAt = now
            user.updatedAt = now
            try await user.save(on: database)
        }
        return user
    }

    /// Sends a fresh verification link when an unverified account has this address; silent otherwise.
    func resendVerification(email raw: String, client: RateLimiter.Subject) async throws {
        guard let user = try await accountAskingForEmail(raw, client: client), user.emailVerifiedAt == nil else {
            return
        }
        try await sendVerification(to: user)
    }

    /// Changes the address of an account that has not been verified yet and sends the link to the new one.
    func correctEmail(
        email raw: String, password: String, newEmail rawNew: String, client: RateLimiter.Subject
    ) async throws -> UserRecord {
        var validator = FieldValidator()
        let newAddress = AccountFields.email(rawNew, field: "newEmail", into: &validator)
        try validator.check()
        let sessions = SessionService(database: database, services: services)
        let user = try await sessions.checkCredentials(email: raw, password: password, client: client)
        guard user.emailVerifiedAt == nil else { throw AppError.conflict(.alreadyVerified) }
        guard newAddress!.value != user.email else { return user }
        try await rateLimiter.spend(.emailRequest, [client, .account(email: user.email)])
        guard try await isEmailAvailable(newAddress!.value) else { throw AppError.conflict(.emailTaken) }
        user.email = newAddress!.value
        user.updatedAt = now
        do {
            try await user.save(on: database)
        } catch let error as any DatabaseError where error.isConstraintFailure {
            throw AppError.conflict(.emailTaken)
        }
        try await sendVerification(to: user)
        return user
    }

    private func sendVerification(to user: UserRecord) async throws {
        let token = SecretToken.generate()
        let userID = try user.requireID()
        let now = self.now
        try await database.atomically { database in
            try await EmailTokenRecord.query(on: database)
                .filter(\.$user.$id == userID)
                .filter(\.$purpose == EmailTokenRecord.Purpose.verification)
                .filter(\.$usedAt == nil)
                .filter(\.$expiresAt > now)
                .set(\.$expiresAt, to: now)
                .update()
            try await EmailTokenRecord(
                userID: userID, purpose: .verification, tokenHash: token.hash, email: user.email,
                expiresAt: now.addingTimeInterval(AccountLifetimes.emailVerification), now: now
            ).create(on: database)
        }
        await deliver(composer.verification(to: user.email, token: token, language: user.language))
    }

    // MARK: Passwords

    /// Emails a reset link when an account has this address; the caller learns nothing either way.
    func requestPasswordReset(email raw: String, client: RateLimiter.Subject) async throws {
        guard let user = try await accountAskingForEmail(raw, client: client), user.deactivatedAt == nil else {
            return
        }
        try await sendPasswordReset(to: user)
    }

    /// Emails the account a link to choose a new password, as when the person asks for one.
    func sendPasswordReset(to user: UserRecord) async throws {
        let token = SecretToken.generate()
        try await EmailTokenRecord(
            userID: try user.requireID(), purpose: .passwordReset, tokenHash: token.hash, email: user.email,
            expiresAt: now.addingTimeInterval(AccountLifetimes.passwordReset), now: now
        ).create(on: database)
        await deliver(composer.passwordReset(to: user.email, token: token, language: user.language))
    }

    /// Sets a new password from a reset link and signs the account out everywhere.
    func confirmPasswordReset(token: String, newPassword: String, client: RateLimiter.Subject) async throws {
        try await rateLimiter.ensureAllowed(.verification, [client])
        guard let record = try await findToken(token, purpose: .passwordReset) else {
            try await rateLimiter.recordFailure(.verification, [client])
            throw AppError.field("token", .invalidValue)
        }
        guard record.usedAt == nil else { throw AppError.field("token", .alreadyUsed) }
        guard record.expiresAt > now else { throw AppError.field("token", .expired) }
        guard let user = try await UserRecord.find(record.$user.id, on: database), user.email == record.email else {
            throw AppError.field("token", .invalidValue)
        }
        var validator = FieldValidator()
        PasswordPolicy.check(newPassword, email: user.email, field: "newPassword", into: &validator)
        try validator.check()
        let digest = try await services.passwords.hash(newPassword)
        let now = self.now
        let userID = try user.requireID()
        try await database.atomically { database in
            // This link and every other reset link still out for the account are spent.
            try await EmailTokenRecord.query(on: database).filter(\.$user.$id == userID)
                .filter(\.$purpose == EmailTokenRecord.Purpose.passwordReset).filter(\.$usedAt == nil)
                .set(\.$usedAt, to: now).update()
            user.passwordHash = digest
            user.mustChangePassword = false
            // Following the emailed link proves the address.
            if user.emailVerifiedAt == nil { user.emailVerifiedAt = now }
            user.updatedAt = now
            try await user.save(on: database)
            try await SessionRecord.query(on: database).filter(\.$user.$id == userID).delete()
        }
    }

    /// Changes the password after checking the current one; every other session is signed out.
    func changePassword(
        user: UserRecord, currentPassword: String, newPassword: String, keeping session: SessionService.Session?
    ) async throws {
        try await RateLimiter(database: database, services: services).reverify(
            currentPassword, of: user, field: "currentPassword")
        var validator = FieldValidator()
        PasswordPolicy.check(newPassword, email: user.email, field: "newPassword", into: &validator)
        if newPassword == currentPassword { validator.add("newPassword", .notAllowed) }
        try validator.check()
        let digest = try await services.passwords.hash(newPassword)
        let userID = try user.requireID()
        let keptID = session?.id
        let now = self.now
        try await database.atomically { database in
            user.passwordHash = digest
            user.mustChangePassword = false
            user.updatedAt = now
            try await user.save(on: database)
            var others = SessionRecord.query(on: database).filter(\.$user.$id == userID)
            if let keptID { others = others.filter(\.$id != keptID) }
            try await others.delete()
        }
    }

    // MARK: Profile

    func updateProfile(user: UserRecord, change: ProfileChange) async throws {
        let userID = try user.requireID()
        let now = self.now
        let movedZone = change.timeZone.map { $0 != user.timeZone } ?? false
        let formerZone = user.timeZone
        try await database.atomically { database in
            if movedZone, let timeZone = change.timeZone {
                try await Self.recordZoneChange(
                    userID: userID, from: formerZone, to: timeZone, since: user.createdAt, now: now, on: database)
            }
            if let name = change.name { user.name = name }
            if let language = change.language { user.locale = language.rawValue }
            if let timeZone = change.timeZone { user.timeZone = timeZone }
            user.updatedAt = now
            try await user.save(on: database)
            if change.shareWithResearch != nil || change.hidesComparison != nil
                || change.sharesContextWithTherapist != nil,
                let profile = try await PatientProfileRecord.query(on: database).filter(\.$user.$id == userID).first()
            {
                if let hides = change.hidesComparison { profile.hidesComparison = hides }
                if let shares = change.sharesContextWithTherapist { profile.sharesContextWithTherapist = shares }
                let share = change.shareWithResearch ?? profile.shareWithResearch
                let sharingChanged = profile.shareWithResearch != share
                profile.shareWithResearch = share
                try await profile.save(on: database)
                if sharingChanged {
                    try await Consents.recordResearchSharing(share, userID: userID, now: now, on: database)
                }
            }
        }
        // Future prompts follow the new local time.
        if movedZone { _ = try await Planner(database: database, services: services).run(now: now, patients: [userID]) }
    }

    /// Keeps the zones a person lived in, for exports that write each time in the zone then in force; the zone the
    /// account started with is written when it is first left.
    static func recordZoneChange(
        userID: UUID, from former: String, to zone: String, since created: Date, now: Date, on database: any Database
    ) async throws {
        if try await TimeZoneChangeRecord.query(on: database).filter(\.$user.$id == userID).count() == 0 {
            try await TimeZoneChangeRecord(userID: userID, timeZone: former, since: created).create(on: database)
        }
        try await TimeZoneChangeRecord(userID: userID, timeZone: zone, since: now).create(on: database)
    }

    // MARK: Helpers

    /// Checks an address someone asks an email for and counts the request against the address and the client,
    /// whether or not an account has it; returns that account, if any.
    private func accountAskingForEmail(_ raw: String, client: RateLimiter.Subject) async throws -> UserRecord? {
        var validator = FieldValidator()
        let address = AccountFields.email(raw, into: &validator)
        try validator.check()
        let subjects: [RateLimiter.Subject] = [client, .account(email: address!.value)]
        try await rateLimiter.ensureAllowed(.emailRequest, subjects)
        try await rateLimiter.recordFailure(.emailRequest, subjects)
        return try await UserRecord.query(on: database).filter(\.$email == address!.value).first()
    }

    func findToken(_ token: String, purpose: EmailTokenRecord.Purpose) async throws -> EmailTokenRecord? {
        guard !token.isEmpty, token.count <= 200 else { return nil }
        return try await EmailTokenRecord.query(on: database)
            .filter(\.$tokenHash == SecretToken.hash(token))
            .filter(\.$purpose == purpose)
            .first()
    }

    /// Sends a message; a mail server that is down must not undo what the person just did, so a failure is
    /// logged and the person can ask for the email again.
    func deliver(_ message: EmailMessage) async {
        do {
            try await services.mailer.send(message)
        } catch {
            logger.error("Email could not be sent: \(String(describing: error))")
        }
    }
}

extension UserRecord {
    var language: Language { Language(rawValue: locale) ?? .fallback }
}
