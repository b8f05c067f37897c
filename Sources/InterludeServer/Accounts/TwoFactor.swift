import Crypto
import Fluent
import Foundation
import InterludeCore
import SQLKit

/// Two-factor sign-in for staff: a code from an authenticator app (RFC 6238) besides the password. Each staff member
/// turns it on for themselves; an administrator can require it of all staff, and reset it for one who lost the
/// device. A code is taken once: the step it belongs to is remembered, and an older or equal one is refused.
struct TwoFactorService: Sendable {
    let database: any Database
    let services: AppServices

    static let requiredSetting = "security.twoFactorRequired"
    static let issuer = "Interlude"

    private var now: Date { services.clock.now }

    /// What an authenticator app needs: the secret as text and as an `otpauth://` address.
    struct Setup: Sendable {
        let secret: String
        let uri: String
    }

    /// Whether an administrator requires two-factor sign-in of every staff member.
    func isRequired() async throws -> Bool {
        try await SettingRecord.find(Self.requiredSetting, on: database)?.value == "true"
    }

    func setRequired(_ required: Bool, grant: AdminGrant) async throws {
        try await database.atomically { database in
            let value = required ? "true" : "false"
            if let setting = try await SettingRecord.find(Self.requiredSetting, on: database) {
                setting.value = value
                setting.updatedAt = now
                try await setting.save(on: database)
            } else {
                try await SettingRecord(key: Self.requiredSetting, value: value, now: now).create(on: database)
            }
            try await grant.record(.twoFactorRequirementChanged, target: value, on: database)
        }
    }

    /// The secret being set up for `user`, made the first time it is asked for; nil once two-factor is on.
    func setup(for user: UserRecord) async throws -> Setup? {
        guard user.totpSecret == nil else { return nil }
        let secret: [UInt8]
        if let stored = try self.secret(sealed: user.totpPendingSecret) {
            secret = stored
        } else {
            secret = Array(SymmetricKey(size: .bits256).withUnsafeBytes { Data($0) }.prefix(20))
            user.totpPendingSecret = try services.cipher.seal(Base32.encode(secret))
            try await user.save(on: database)
        }
        let code = TimeBasedCode(secret: secret)
        let grouped = Base32.encode(secret, padded: false).enumerated()
            .map { $0.offset > 0 && $0.offset % 4 == 0 ? " \($0.element)" : "\($0.element)" }.joined()
        return Setup(secret: grouped, uri: code.provisioningURI(account: user.email, issuer: Self.issuer))
    }

    /// Turns two-factor sign-in on once the person shows a code from the app they set it up in.
    func confirm(_ user: UserRecord, code: String) async throws {
        guard user.totpSecret == nil, let pending = user.totpPendingSecret, let secret = try secret(sealed: pending)
        else {
            throw AppError.field("code", .invalidValue)
        }
        guard let step = TimeBasedCode(secret: secret).matchingStep(code, at: now) else {
            throw AppError.field("code", .invalidValue)
        }
        user.totpSecret = pending
        user.totpPendingSecret = nil
        user.totpEnabledAt = now
        user.totpLastStep = step
        try await database.atomically { database in
            try await user.save(on: database)
            try await OwnAccount(user: user, services: services).record(.twoFactorEnabled, on: database)
        }
    }

    /// Turns it off, with the password and a current code; not while an administrator requires it.
    func disable(_ user: UserRecord, password: String, code: String) async throws {
        guard user.totpSecret != nil else { return }
        guard try await !isRequired() else { throw AppError.forbidden(.twoFactorRequired) }
        try await RateLimiter(database: database, services: services).reverify(
            password, of: user, field: "currentPassword")
        try await useCode(code, of: user)
        try await clear(user) {
            try await OwnAccount(user: user, services: services).record(.twoFactorDisabled, on: $0)
        }
    }

    /// An administrator turns it off for a staff member who lost the device; they set it up anew at next sign-in.
    func reset(_ user: UserRecord, grant: AdminGrant) async throws {
        guard user.role.isStaff else { throw AppError.notFound }
        let target = "user:\(try user.requireID())"
        try await clear(user) { try await grant.record(.twoFactorReset, target: target, on: $0) }
    }

    /// The check at sign-in: nothing to do for an account without two-factor; otherwise a current, unused code.
    /// Staff without it are refused at the API when it is required; the console leads them to set it up.
    func checkSignIn(_ user: UserRecord, code: String?, console: Bool) async throws {
        guard user.totpSecret != nil else {
            if !console, user.role.isStaff, try await isRequired() {
                throw AppError.forbidden(.twoFactorSetupRequired)
            }
            return
        }
        guard let code, !code.isEmpty else { throw AppError.field("code", .required) }
        try await useCode(code, of: user)
    }

    /// Whether a signed-in staff member still has to set two-factor sign-in up before using the console.
    func mustSetUp(_ user: UserRecord) async throws -> Bool {
        user.totpSecret == nil && user.role.isStaff ? try await isRequired() : false
    }

    /// Takes a code once: the database moves the last used step forward only if it lies before this one.
    private func useCode(_ code: String, of user: UserRecord) async throws {
        guard let secret = try secret(sealed: user.totpSecret),
            let step = TimeBasedCode(secret: secret).matchingStep(code, at: now)
        else { throw AppError.field("code", .invalidValue) }
        let taken = try await database.updateRow(
            UserRecord.schema, id: try user.requireID(), set: ["totp_last_step": SQLBind(step)],
            if: {
                $0.where(group: {
                    $0.where("totp_last_step", .is, SQLLiteral.null).orWhere("totp_last_step", .lessThan, SQLBind(step))
                })
            })
        guard taken else { throw AppError.field("code", .alreadyUsed) }
        user.totpLastStep = step
    }

    /// The raw secret behind a sealed Base32 one; nil when there is none.
    private func secret(sealed: String?) throws -> [UInt8]? {
        try sealed.flatMap { Base32.decode(try services.cipher.open($0)) }
    }

    private func clear(_ user: UserRecord, audit: @Sendable @escaping (any Database) async throws -> Void) async throws
    {
        user.totpSecret = nil
        user.totpPendingSecret = nil
        user.totpEnabledAt = nil
        user.totpLastStep = nil
        try await database.atomically { database in
            try await user.save(on: database)
            try await audit(database)
        }
    }
}
