import Fluent
import Foundation
import InterludeCore

/// After a research study closes and its retention period passes, the people who took part in it and in nothing
/// else lose what identifies them: email, name, date of birth and gender, sign-in (password, two-factor, sessions,
/// tokens, email links), devices, notification settings and texts, calendar feeds, backups, copies of their data
/// (with their files) and mail waiting for them. The account keeps
/// its id, its pseudonym and the pseudonymised research data; it can no longer sign in. People who still take part
/// in a running study, one within its period, or a practice keep everything.
struct ClosedStudyRetention: Sendable {
    let database: any Database
    let services: AppServices

    /// The domain of the placeholder address a forgotten account gets; it never receives mail.
    static let forgottenDomain = "forgotten.invalid"

    static func isForgotten(_ user: UserRecord) -> Bool { user.email.hasSuffix("@" + forgottenDomain) }

    /// Forgets everyone due; answers how many.
    func run(now: Date) async throws -> Int {
        let closed = try await StudyRecord.query(on: database).filter(\.$status == .closed)
            .filter(\.$joinMode != .pairingCode).all()
        let past = Set(
            closed.filter { study in
                study.closedAt.map { $0.addingTimeInterval(Double(study.retentionDays) * 86_400) <= now } ?? false
            }.compactMap(\.id))
        guard !past.isEmpty else { return 0 }
        let candidates = Set(
            try await EnrollmentRecord.query(on: database).filter(\.$study.$id ~~ past).all(\.$patient.$id))
        var forgotten = 0
        for patientID in candidates {
            let studies = try await EnrollmentRecord.query(on: database).filter(\.$patient.$id == patientID).all(
                \.$study.$id)
            guard Set(studies).isSubset(of: past), let user = try await UserRecord.find(patientID, on: database),
                user.role == .patient, !Self.isForgotten(user)
            else { continue }
            try await forget(user, now: now)
            forgotten += 1
        }
        return forgotten
    }

    private func forget(_ user: UserRecord, now: Date) async throws {
        let userID = try user.requireID()
        let email = user.email
        // A password nobody knows, hashed like any other, so sign-in simply fails.
        let unusable = try await services.passwords.hash(SecretToken.generate().value)
        let copies = try await SelfExportRecord.query(on: database).filter(\.$user.$id == userID).all(\.$id)
        try await database.atomically { database in
            user.email = "\(userID.lowercasedText)@\(Self.forgottenDomain)"
            user.name = nil
            user.passwordHash = unusable
            user.totpSecret = nil
            user.totpPendingSecret = nil
            user.totpEnabledAt = nil
            user.deactivatedAt = now
            user.updatedAt = now
            try await user.save(on: database)
            try await PatientProfileRecord.query(on: database).filter(\.$user.$id == userID)
                .set(\.$dateOfBirth, to: nil).set(\.$gender, to: nil).update()
            try await SessionRecord.query(on: database).filter(\.$user.$id == userID).delete()
            try await AccessTokenRecord.query(on: database).filter(\.$user.$id == userID).delete()
            try await EmailTokenRecord.query(on: database).filter(\.$user.$id == userID).delete()
            try await DeviceRecord.query(on: database).filter(\.$user.$id == userID).delete()
            try await NotificationPreferenceRecord.query(on: database).filter(\.$user.$id == userID).delete()
            try await NotificationRecord.query(on: database).filter(\.$user.$id == userID).delete()
            try await CalendarFeedRecord.query(on: database).filter(\.$patient.$id == userID).delete()
            try await InterventionBackupRecord.query(on: database).filter(\.$user.$id == userID).delete()
            try await SyncMutationRecord.query(on: database).filter(\.$user.$id == userID).delete()
            try await SelfExportRecord.query(on: database).filter(\.$user.$id == userID).delete()
            try await RateLimiter(database: database, services: services).forget([
                .account(email: email), .account(id: userID),
            ])
        }
        _ = OutboxMail(services: services).remove(addressedTo: email)
        await services.files(on: database).remove(copies.map(StoredFile.selfExport))
    }
}
