import Fluent
import Foundation
import InterludeCore

/// A patient's treatments as the patient sees them: going on and ended, with whether a former therapist still reads
/// what was shared before the end, and the patient's right to end that access without erasing anything.
struct PatientTreatments: Sendable {
    let database: any Database
    let services: AppServices

    private var now: Date { services.clock.now }

    struct Listed: Sendable {
        let enrollment: EnrollmentRecord
        let therapistName: String
        /// Going on, paused, or ended (also when the patient left the practice or ended the access).
        let status: TreatmentStatus
        /// For an ended treatment: whether the former therapist still reads what came before its end.
        let formerAccess: Bool
    }

    /// Every treatment the patient began with a therapist, newest first.
    func list(of patientID: UUID) async throws -> [Listed] {
        let enrollments = try await EnrollmentRecord.query(on: database)
            .filter(\.$patient.$id == patientID).filter(\.$therapist.$id != nil)
            .filter(\.$status ~~ [EnrollmentStatus.active, .ended, .withdrawn])
            .sort(\.$createdAt, .descending).all()
        let therapistIDs = Array(Set(enrollments.compactMap { $0.$therapist.id }))
        let names = Dictionary(
            try await TherapistProfileRecord.query(on: database).filter(\.$user.$id ~~ therapistIDs).all()
                .map { ($0.$user.id, $0.fullName) },
            uniquingKeysWith: { first, _ in first })
        return enrollments.map { enrollment in
            Listed(
                enrollment: enrollment, therapistName: enrollment.$therapist.id.flatMap { names[$0] } ?? "",
                status: enrollment.status == .withdrawn ? .ended : enrollment.treatmentStatus,
                formerAccess: enrollment.status == .ended)
        }
    }

    /// Ends the former therapist's access to an ended treatment of the patient's, and to earlier ones with the same
    /// therapist in the same practice: each is marked left, its consents revoked, nothing erased. The therapist no
    /// longer finds the patient in their caseload.
    func endAccess(_ enrollmentID: UUID, of patientID: UUID) async throws {
        guard let enrollment = try await EnrollmentRecord.find(enrollmentID, on: database),
            enrollment.$patient.id == patientID, let therapistID = enrollment.$therapist.id
        else { throw AppError.notFound }
        switch enrollment.status {
        case .active: throw AppError.conflict(.treatmentOngoing)
        case .ended: break
        default: return
        }
        let studyID = enrollment.$study.id
        let now = self.now
        try await database.atomically { database in
            let ended = try await EnrollmentRecord.query(on: database)
                .filter(\.$patient.$id == patientID).filter(\.$therapist.$id == therapistID)
                .filter(\.$study.$id == studyID).filter(\.$status == EnrollmentStatus.ended).all()
            for record in ended {
                record.end(as: .withdrawn, at: now)
                try await record.save(on: database)
            }
            try await ConsentRecord.query(on: database)
                .filter(\.$user.$id == patientID).filter(\.$study.$id == studyID).filter(\.$revokedAt == nil)
                .set(\.$revokedAt, to: now).update()
        }
    }
}
