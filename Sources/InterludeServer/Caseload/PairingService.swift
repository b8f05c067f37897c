import Fluent
import Foundation
import InterludeCore
import SQLKit
import Vapor

/// Pairing codes: therapists hand them out, patients redeem them to join the therapist's practice.
struct PairingService: Sendable {
    static let noteMaxLength = 200
    static let maxCodesPerRequest = 50

    let database: any Database
    let services: AppServices

    private var now: Date { services.clock.now }

    /// The practice study a therapist's patients join.
    func practice(of therapistID: UUID) async throws -> StudyRecord {
        guard
            let practice = try await StudyRecord.query(on: database)
                .filter(\.$owner.$id == therapistID)
                .filter(\.$joinMode == JoinMode.pairingCode)
                .first()
        else { throw AppError.notFound }
        return practice
    }

    func createCodes(therapist: UserRecord, note rawNote: String?, count: Int) async throws -> [PairingCodeRecord] {
        var validator = FieldValidator()
        let note = validator.text(rawNote, field: "note", required: false, maxLength: Self.noteMaxLength)
        if count < 1 || count > Self.maxCodesPerRequest {
            validator.add("count", .invalidValue, limit: Self.maxCodesPerRequest)
        }
        try validator.check()
        let therapistID = try therapist.requireID()
        let practiceID = try await practice(of: therapistID).requireID()
        var generator = SystemRandomNumberGenerator()
        var created: [PairingCodeRecord] = []
        let now = self.now
        while created.count < count {
            let code = PairingCode.make(using: &generator).value
            let record = PairingCodeRecord(
                therapistID: therapistID, studyID: practiceID, code: code, note: note,
                expiresAt: now.addingTimeInterval(AccountLifetimes.pairingCode), now: now)
            do {
                try await record.create(on: database)
                created.append(record)
            } catch let error as any DatabaseError where error.isConstraintFailure {
                continue  // the code exists already; draw another
            }
        }
        return created
    }

    func codes(of therapist: UserRecord) async throws -> [PairingCodeRecord] {
        try await PairingCodeRecord.query(on: database)
            .filter(\.$therapist.$id == therapist.requireID())
            .sort(\.$createdAt, .descending)
            .all()
    }

    func code(_ id: UUID, of therapist: UserRecord) async throws -> PairingCodeRecord {
        guard let code = try await PairingCodeRecord.find(id, on: database),
            code.$therapist.id == therapist.id
        else { throw AppError.notFound }
        return code
    }

    struct Paired: Sendable {
        let profile: PatientProfileRecord
        let enrollment: EnrollmentRecord
        let therapistID: UUID
    }

    /// Redeems a code for a patient. Wrong, used and expired codes count toward the pairing rate limit.
    func redeem(patient: UserRecord, request: PairingRequest, client: RateLimiter.Subject) async throws -> Paired {
        let patientID = try patient.requireID()
        let limiter = RateLimiter(database: database, services: services)
        let subjects: [RateLimiter.Subject] = [.account(id: patientID), client]
        try await limiter.ensureAllowed(.pairing, subjects)
        if try await Caseloads(database: database).practiceEnrollment(of: patientID) != nil {
            throw AppError.conflict(.alreadyPaired)
        }
        let now = self.now
        guard let code = try await PairingCodeRecord.query(on: database).filter(\.$code == request.code.value).first()
        else {
            try await limiter.recordFailure(.pairing, subjects)
            throw AppError.field("code", .invalidValue)
        }
        switch PairingCodeStatus.of(expiresAt: code.expiresAt, redeemedAt: code.redeemedAt, now: now) {
        case .redeemed:
            try await limiter.recordFailure(.pairing, subjects)
            throw AppError.conflict(.pairingCodeUsed)
        case .expired:
            try await limiter.recordFailure(.pairing, subjects)
            throw AppError.conflict(.pairingCodeExpired)
        case .open:
            break
        }
        let codeID = try code.requireID()
        let therapistID = code.$therapist.id
        let studyID = code.$study.id
        let studies = StudyService(database: database, services: services)
        let paired = try await studies.retryingAllocation {
            try await pair(
                patientID, codeID: codeID, therapistID: therapistID, studyID: studyID, zone: patient.zone,
                request: request)
        } constraintFailed: {
            // Another code was redeemed for this patient at the same moment; the database kept one pairing. Else
            // another patient of the practice took the same place of its allocation log, and the pairing is tried again.
            if try await Caseloads(database: database).practiceEnrollment(of: patientID) != nil {
                throw AppError.conflict(.alreadyPaired)
            }
        }
        _ = try await Planner(database: database, services: services).run(now: now, patients: [patientID])
        return paired
    }

    /// Claims the code and pairs, in one transaction: a code already claimed, or a pairing made in the meantime,
    /// undoes both.
    private func pair(
        _ patientID: UUID, codeID: UUID, therapistID: UUID, studyID: UUID, zone: TimeZone, request: PairingRequest
    ) async throws -> Paired {
        let now = self.now
        let services = services
        return try await database.atomically { database in
            // Claim the code only if nobody redeemed it in the meantime.
            let claimed = try await database.updateRow(
                PairingCodeRecord.schema, id: codeID,
                set: ["redeemed_at": SQLBind(now), "redeemed_by": SQLBind(patientID)],
                if: { $0.where("redeemed_at", .is, SQLLiteral.null) })
            guard claimed else { throw AppError.conflict(.pairingCodeUsed) }
            return try await Self.enroll(
                patientID, with: therapistID, in: studyID, dateOfBirth: request.dateOfBirth, gender: request.gender,
                zone: zone, now: now, on: database, services: services)
        }
    }

    /// Makes the patient the therapist's client in their practice, with the date of birth and gender they gave, in
    /// the caller's transaction. A practice comparing arms allocates them first, as a study allocates a joining
    /// participant (before the enrollment is written, which would hold the practice against the allocation's lock);
    /// once every arm has its participants the comparison takes nobody more and the patient pairs without an arm.
    static func enroll(
        _ patientID: UUID, with therapistID: UUID, in studyID: UUID, dateOfBirth: LocalDate, gender: Gender,
        zone: TimeZone, now: Date, on database: any Database, services: AppServices
    ) async throws -> Paired {
        guard let profile = try await PatientProfileRecord.query(on: database).filter(\.$user.$id == patientID).first()
        else { throw AppError.forbidden(.notAllowed) }
        profile.dateOfBirth = dateOfBirth.description
        profile.gender = gender.rawValue
        try await profile.save(on: database)
        let enrollment = EnrollmentRecord(
            studyID: studyID, patientID: patientID, therapistID: therapistID,
            status: EnrollmentStatus.active, consentVersion: StaffAccounts.practiceConsent, now: now)
        if let practice = try await StudyRecord.find(studyID, on: database), !StudyArms.names(of: practice).isEmpty {
            do {
                enrollment.arm = try await StudyAllocations(database: database, services: services).allocate(
                    patientID, zone: zone, joining: practice, now: now)
            } catch AppError.conflict(.studyFull) {
                enrollment.arm = nil
            }
        }
        try await enrollment.create(on: database)
        return Paired(profile: profile, enrollment: enrollment, therapistID: therapistID)
    }
}
