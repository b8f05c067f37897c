import Fluent
import Foundation
import InterludeCore
import SQLKit
import Vapor

/// A therapist invites a client by email: the client follows the link, sets a password and is the therapist's
/// client at once, without a pairing code. Until then nothing exists but the emailed secret; an address that has
/// an account already is paired with a code instead.
struct InvitationService: Sendable {
    struct Sent: Sendable {
        let email: String
        let expiresAt: Date
    }

    struct Accepted: Sendable {
        let token: SecretToken
        let session: SessionService.Authenticated
    }

    let database: any Database
    let services: AppServices
    let logger: Logger

    private var now: Date { services.clock.now }
    private var accounts: AccountService { AccountService(database: database, services: services, logger: logger) }

    /// Emails an invitation to the address in `language`, audited; 422 naming `email` when it is no address, 409
    /// when it has an account.
    func invite(email raw: String, language: Language, by therapist: UserRecord) async throws -> Sent {
        guard therapist.role == .therapist else { throw AppError.forbidden(.notAllowed) }
        var validator = FieldValidator()
        validator.limit(raw, field: "email", maxLength: EmailAddress.maxLength)
        let parsed = validator.errors.isEmpty ? AccountFields.email(raw, into: &validator) : nil
        try validator.check()
        guard let address = parsed else { throw AppError.field("email", .invalidFormat) }
        let therapistID = try therapist.requireID()
        _ = try await PairingService(database: database, services: services).practice(of: therapistID)
        guard try await accounts.isEmailAvailable(address.value) else { throw AppError.conflict(.emailTaken) }
        try await RateLimiter(database: database, services: services).spend(.invitation, [.account(id: therapistID)])
        let token = SecretToken.generate()
        let expiresAt = now.addingTimeInterval(AccountLifetimes.invitation)
        try await EmailTokenRecord(
            userID: therapistID, purpose: .invitation, tokenHash: token.hash, email: address.value,
            expiresAt: expiresAt, now: now
        ).create(on: database)
        let composer = EmailComposer(localizer: services.localizer, publicURL: services.settings.publicURL)
        let name =
            (try? await TherapistProfiles(database: database).profile(of: therapistID).0.fullName) ?? therapist.name
            ?? ""
        await accounts.deliver(
            composer.invitation(to: address.value, token: token, therapist: name, language: language))
        try await CaseloadView.recordInvitation(by: therapist, database: database, services: services)
        return Sent(email: address.value, expiresAt: expiresAt)
    }

    /// The address an unused, unexpired invitation was sent to; the link's problem by name otherwise.
    func invitedAddress(token: String, client: RateLimiter.Subject) async throws -> EmailTokenRecord {
        let limiter = RateLimiter(database: database, services: services)
        try await limiter.ensureAllowed(.verification, [client])
        guard let record = try await accounts.findToken(token, purpose: .invitation) else {
            try await limiter.recordFailure(.verification, [client])
            throw AppError.field("token", .invalidValue)
        }
        guard record.usedAt == nil else { throw AppError.field("token", .alreadyUsed) }
        guard record.expiresAt > now else { throw AppError.field("token", .expired) }
        return record
    }

    /// Creates the client's account with the invited address (proven by the link), makes them the therapist's
    /// client and signs them in. The link works once.
    func accept(_ invitation: EmailTokenRecord, _ acceptance: InvitationAcceptance) async throws -> Accepted {
        let therapistID = invitation.$user.id
        guard let therapist = try await UserRecord.find(therapistID, on: database), therapist.deactivatedAt == nil,
            let practiceID = try await PairingService(database: database, services: services).practice(of: therapistID)
                .id
        else { throw AppError.field("token", .invalidValue) }
        let now = self.now
        let claimed = try await database.updateRow(
            EmailTokenRecord.schema, id: try invitation.requireID(), set: ["used_at": SQLBind(now)],
            if: { $0.where("used_at", .is, SQLLiteral.null) })
        guard claimed else { throw AppError.field("token", .alreadyUsed) }
        let patient: UserRecord
        do {
            patient = try await accounts.createPatient(acceptance.registration, verification: nil)
        } catch {
            try await EmailTokenRecord.query(on: database).filter(\.$id == invitation.requireID()).set(
                \.$usedAt, to: nil
            ).update()
            throw error
        }
        let patientID = try patient.requireID()
        let services = services
        let zone = patient.zone
        _ = try await database.atomically { database in
            try await PairingService.enroll(
                patientID, with: therapistID, in: practiceID, dateOfBirth: acceptance.dateOfBirth,
                gender: acceptance.gender, zone: zone, now: now, on: database, services: services)
        }
        _ = try await Planner(database: database, services: services).run(now: now, patients: [patientID])
        let (token, session) = try await SessionService(database: database, services: services).openAPISession(
            for: patient)
        return Accepted(token: token, session: session)
    }
}
