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

    /// The therapist's patients, most recently paired first.
    func caseload(of therapistID: UUID) async throws -> [Entry] {
        let enrollments = try await EnrollmentRecord.query(on: database)
            .filter(\.$therapist.$id == therapistID)
            .filter(\.$status == EnrollmentStatus.active)
            .with(\.$patient)
            .sort(\.$createdAt, .descending)
            .all()
        let patientIDs = enrollments.map { $0.$patient.id }
        let profiles = try await PatientProfileRecord.query(on: database)
            .filter(\.$user.$id ~~ patientIDs)
            .all()
        let byPatient = Dictionary(uniqueKeysWithValues: profiles.map { ($0.$user.id, $0) })
        return enrollments.compactMap { enrollment in
            guard let profile = byPatient[enrollment.$patient.id] else { return nil }
            return Entry(patient: enrollment.patient, profile: profile, enrollment: enrollment)
        }
    }

    /// One patient of the therapist's caseload; not found for anyone else's patient.
    func patient(_ patientID: UUID, of therapistID: UUID) async throws -> Entry {
        guard
            let enrollment = try await EnrollmentRecord.query(on: database)
                .filter(\.$therapist.$id == therapistID)
                .filter(\.$patient.$id == patientID)
                .filter(\.$status == EnrollmentStatus.active)
                .with(\.$patient)
                .first(),
            let profile = try await PatientProfileRecord.query(on: database).filter(\.$user.$id == patientID).first()
        else { throw AppError.notFound }
        return Entry(patient: enrollment.patient, profile: profile, enrollment: enrollment)
    }
}
