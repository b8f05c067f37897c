import Fluent
import Foundation
import InterludeCore

/// What an admin changes about a staff account after creating it: the name and address, a new one-time password,
/// and deleting it.
extension StaffAccounts {
    /// Changes the name and address an account is known by; a field left out stays.
    func update(_ userID: UUID, name rawName: String?, email rawEmail: String?, by grant: AdminGrant) async throws
        -> UserRecord
    {
        let user = try await account(userID)
        guard rawName != nil || rawEmail != nil else { return user }
        var validator = FieldValidator()
        let email = rawEmail.map { AccountFields.email($0, into: &validator) } ?? nil
        let name = rawName.map { validator.text($0, field: "name", required: false, maxLength: Self.nameMaxLength) }
        try validator.check()
        if let email, email.value != user.email {
            guard try await UserRecord.query(on: database).filter(\.$email == email.value).first() == nil else {
                throw AppError.conflict(.emailTaken)
            }
            user.email = email.value
        }
        if let name { user.name = name }
        user.updatedAt = services.clock.now
        do {
            try await database.atomically { database in
                try await user.save(on: database)
                try await grant.record(.userChanged, target: "user:\(userID)", on: database)
            }
        } catch let error as any DatabaseError where error.isConstraintFailure {
            throw AppError.conflict(.emailTaken)
        }
        return user
    }

    /// Replaces the password with a one-time one that must be changed at the next sign-in, and signs the account
    /// out everywhere; answers the new password, shown once.
    func resetPassword(_ userID: UUID, by grant: AdminGrant) async throws -> String {
        let user = try await account(userID)
        let password = Self.generatePassword()
        let digest = try await services.passwords.hash(password)
        let now = services.clock.now
        try await database.atomically { database in
            user.passwordHash = digest
            user.mustChangePassword = true
            user.updatedAt = now
            try await user.save(on: database)
            try await SessionRecord.query(on: database).filter(\.$user.$id == userID).delete()
            try await grant.record(.userPasswordReset, target: "user:\(userID)", on: database)
        }
        return password
    }

    /// Deletes a staff account: address, name, password, second factor, sessions, tokens, devices, team places,
    /// a therapist's profile and open pairing codes go; the id stays so the audit log still says who did what. Refused for one's own
    /// account, for a therapist who still follows clients, and for the last owner of a study with others in it.
    func delete(_ userID: UUID, by grant: AdminGrant) async throws {
        let user = try await account(userID)
        guard userID != grant.admin.id else { throw AppError.forbidden(.notAllowed) }
        let clients = try await EnrollmentRecord.query(on: database)
            .filter(\.$therapist.$id == userID).filter(\.$status == EnrollmentStatus.active).count()
        guard clients == 0 else { throw AppError.conflict(.hasClients) }
        for owned in try await StudyStaffRecord.query(on: database).filter(\.$user.$id == userID).filter(
            \.$role == .owner
        ).all() {
            let studyID = owned.$study.id
            let owners = try await StudyStaffRecord.query(on: database)
                .filter(\.$study.$id == studyID).filter(\.$role == .owner).filter(\.$user.$id != userID).count()
            let ownPractice =
                try await StudyRecord.query(on: database)
                .filter(\.$id == studyID).filter(\.$owner.$id == userID).filter(\.$joinMode == JoinMode.pairingCode)
                .count() > 0
            if owners == 0 && !ownPractice { throw AppError.conflict(.lastOwner) }
        }
        let digest = try await services.passwords.hash(Self.generatePassword())
        let now = services.clock.now
        try await database.atomically { database in
            try await SessionRecord.query(on: database).filter(\.$user.$id == userID).delete()
            try await EmailTokenRecord.query(on: database).filter(\.$user.$id == userID).delete()
            try await AccessTokenRecord.query(on: database).filter(\.$user.$id == userID).delete()
            try await DeviceRecord.query(on: database).filter(\.$user.$id == userID).delete()
            try await StudyStaffRecord.query(on: database).filter(\.$user.$id == userID).delete()
            try await TherapistProfileRecord.query(on: database).filter(\.$user.$id == userID).delete()
            // Codes nobody redeemed yet would pair someone with an account that is gone.
            try await PairingCodeRecord.query(on: database).filter(\.$therapist.$id == userID).filter(
                \.$redeemedAt == nil
            )
            .filter(\.$expiresAt > now).set(\.$expiresAt, to: now).update()
            user.email = "deleted-\(userID.lowercasedText)@deleted.invalid"
            user.name = nil
            user.passwordHash = digest
            user.totpSecret = nil
            user.totpPendingSecret = nil
            user.totpEnabledAt = nil
            user.deactivatedAt = user.deactivatedAt ?? now
            user.deletedAt = now
            user.updatedAt = now
            try await user.save(on: database)
            try await grant.record(.userDeleted, target: "user:\(userID)", on: database)
        }
    }
}
