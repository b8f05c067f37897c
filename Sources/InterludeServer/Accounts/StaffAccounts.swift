import Fluent
import Foundation
import InterludeCore
import Vapor

/// Creating, listing and deactivating staff accounts; a therapist also gets a profile and a practice.
package struct StaffAccounts: Sendable {
    static let nameMaxLength = 200

    let database: any Database
    let services: AppServices

    private var now: Date { services.clock.now }

    struct Created: Sendable {
        let user: UserRecord
        /// The generated password, shown once; nil when the caller chose the password.
        let oneTimePassword: String?
    }

    /// Creates a staff account. Without `password` a one-time password is generated that must be changed at the
    /// first sign-in; `forceChange` also forces a change of a given password.
    func create(
        email rawEmail: String, role rawRole: String, name rawName: String?, password: String?,
        forceChange: Bool = true, by grant: AdminGrant?
    ) async throws -> Created {
        var validator = FieldValidator()
        let email = AccountFields.email(rawEmail, into: &validator)
        let role = Role(rawValue: rawRole)
        if role == nil || role == .patient { validator.add("role", rawRole.isEmpty ? .required : .invalidValue) }
        let name = validator.text(rawName, field: "name", required: false, maxLength: Self.nameMaxLength)
        if let password { PasswordPolicy.check(password, email: rawEmail, into: &validator) }
        try validator.check()
        if try await UserRecord.query(on: database).filter(\.$email == email!.value).first() != nil {
            throw AppError.conflict(.emailTaken)
        }
        let oneTimePassword = password == nil ? Self.generatePassword() : nil
        let digest = try await services.passwords.hash(password ?? oneTimePassword!)
        let now = self.now
        let user = UserRecord(
            email: email!.value, passwordHash: digest, role: role!, name: name,
            locale: Language.fallback.rawValue, timeZone: "Europe/Vienna",
            mustChangePassword: oneTimePassword != nil || forceChange, now: now)
        user.emailVerifiedAt = now
        do {
            try await database.atomically { database in
                try await user.create(on: database)
                if role == .therapist {
                    try await Self.openPractice(for: user, on: database, now: now)
                }
                try await grant?.record(.userCreated, target: "user:\(try user.requireID())", on: database)
            }
        } catch let error as any DatabaseError where error.isConstraintFailure {
            throw AppError.conflict(.emailTaken)
        }
        return Created(user: user, oneTimePassword: oneTimePassword)
    }

    /// A therapist's profile and the practice study their patients join through pairing codes.
    private static func openPractice(for user: UserRecord, on database: any Database, now: Date) async throws {
        let userID = try user.requireID()
        let displayName = user.name ?? user.email
        try await TherapistProfileRecord(userID: userID, fullName: displayName).create(on: database)
        let practice = StudyRecord(
            ownerID: userID, title: .neutral(displayName), description: LocalizedText([:]), consentText: "",
            consentVersion: Self.practiceConsent,
            joinMode: .pairingCode, joinPasswordHash: nil, status: .running,
            now: now)
        try await practice.create(on: database)
        try await StudyStaffRecord(studyID: try practice.requireID(), userID: userID, role: .owner)
            .create(on: database)
    }

    /// The consent version recorded for a practice: pairing is covered by the privacy policy.
    package static let practiceConsent = "practice"

    /// The staff accounts, newest first; deleted ones only when asked (the audit log names them).
    func list(includingDeleted: Bool = false) async throws -> [UserRecord] {
        let query = UserRecord.query(on: database).filter(\.$role != Role.patient).sort(\.$createdAt, .descending)
        if !includingDeleted { query.filter(\.$deletedAt == nil) }
        return try await query.all()
    }

    /// A staff account an admin may change: not found for patients and deleted accounts.
    func account(_ userID: UUID) async throws -> UserRecord {
        guard let user = try await UserRecord.find(userID, on: database), user.role.isStaff, user.deletedAt == nil
        else {
            throw AppError.notFound
        }
        return user
    }

    /// Deactivates (signing out everywhere) or reactivates a staff account. Admins cannot deactivate themselves.
    func setActive(_ active: Bool, userID: UUID, by grant: AdminGrant) async throws -> UserRecord {
        let user = try await account(userID)
        if !active && user.id == grant.admin.id { throw AppError.forbidden(.notAllowed) }
        let now = self.now
        try await database.atomically { database in
            user.deactivatedAt = active ? nil : (user.deactivatedAt ?? now)
            user.updatedAt = now
            try await user.save(on: database)
            if !active {
                try await SessionRecord.query(on: database).filter(\.$user.$id == userID).delete()
            }
            try await grant.record(active ? .userReactivated : .userDeactivated, target: "user:\(userID)", on: database)
        }
        return user
    }

    /// On the first start of an empty installation: the first admin, with a one-time password.
    func bootstrapAdminIfNeeded() async throws -> Created? {
        guard try await UserRecord.query(on: database).count() == 0 else { return nil }
        return try await create(
            email: services.settings.adminEmail, role: Role.admin.rawValue, name: "Administrator", password: nil,
            by: nil)
    }

    /// 16 characters from an alphabet without look-alikes, about 90 bits.
    static func generatePassword() -> String {
        let alphabet = Array("abcdefghijkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789")
        var generator = SystemRandomNumberGenerator()
        return String((0..<16).map { _ in alphabet.randomElement(using: &generator)! })
    }
}
