import Fluent
import Foundation
import InterludeCore

/// Who is whose patient: the active enrolments in practices.
struct Caseloads: Sendable {
    let database: any Database

    /// The patient's own profile, as the patient reads it.
    func profile(of patientID: UUID) async throws -> PatientProfileRecord? {
        try await PatientProfileRecord.query(on: database).filter(\.$user.$id == patientID).first()
    }

    /// The patient's current practice enrolment, if paired.
    func practiceEnrollment(of patientID: UUID) async throws -> EnrollmentRecord? {
        try await EnrollmentRecord.query(on: database)
            .filter(\.$patient.$id == patientID)
            .filter(\.$therapist.$id != nil)
            .filter(\.$status == EnrollmentStatus.active)
            .first()
    }

    struct Entry: Sendable {
        let patient: UserRecord
        let profile: PatientProfileRecord
        let enrollment: EnrollmentRecord
    }

    /// The therapist's patients, most recently paired first; with those whose treatment with the therapist ended
    /// (the latest treatment of each) when asked.
    func caseload(of therapistID: UUID, includingEnded: Bool = false) async throws -> [Entry] {
        let statuses = includingEnded ? [EnrollmentStatus.active, .ended] : [.active]
        let enrollments = try await EnrollmentRecord.query(on: database)
            .filter(\.$therapist.$id == therapistID)
            .filter(\.$status ~~ statuses)
            .with(\.$patient)
            .sort(\.$createdAt, .descending)
            .all()
        var latest: [UUID: EnrollmentRecord] = [:]
        for enrollment in enrollments where Self.supersedes(enrollment, latest[enrollment.$patient.id]) {
            latest[enrollment.$patient.id] = enrollment
        }
        let chosen = enrollments.filter { latest[$0.$patient.id] === $0 }
        let profiles = try await PatientProfileRecord.query(on: database)
            .filter(\.$user.$id ~~ chosen.map { $0.$patient.id })
            .all()
        let byPatient = Dictionary(uniqueKeysWithValues: profiles.map { ($0.$user.id, $0) })
        return chosen.compactMap { enrollment in
            guard let profile = byPatient[enrollment.$patient.id] else { return nil }
            return Entry(patient: enrollment.patient, profile: profile, enrollment: enrollment)
        }
    }

    /// One patient of the therapist's caseload, in their current treatment or the last one that ended; not found
    /// for anyone else's patient, nor once the patient is in treatment with someone else in the same practice.
    func patient(_ patientID: UUID, of therapistID: UUID) async throws -> Entry {
        let enrollments = try await EnrollmentRecord.query(on: database)
            .filter(\.$patient.$id == patientID)
            .filter(\.$therapist.$id != nil)
            .filter(\.$status ~~ [EnrollmentStatus.active, .ended])
            .with(\.$patient)
            .sort(\.$createdAt, .descending)
            .all()
        var own: EnrollmentRecord?
        for enrollment in enrollments where enrollment.$therapist.id == therapistID && Self.supersedes(enrollment, own)
        {
            own = enrollment
        }
        guard
            let enrollment = own,
            enrollment.status == EnrollmentStatus.active
                || !enrollments.contains(where: {
                    $0.status == EnrollmentStatus.active && $0.$study.id == enrollment.$study.id
                }),
            let profile = try await PatientProfileRecord.query(on: database).filter(\.$user.$id == patientID).first()
        else { throw AppError.notFound }
        return Entry(patient: enrollment.patient, profile: profile, enrollment: enrollment)
    }

    /// A current treatment outweighs an ended one; among ended ones, the latest.
    private static func supersedes(_ candidate: EnrollmentRecord, _ held: EnrollmentRecord?) -> Bool {
        guard let held else { return true }
        if candidate.status == EnrollmentStatus.active { return held.status != EnrollmentStatus.active }
        return held.status != EnrollmentStatus.active && candidate.createdAt > held.createdAt
    }
}
