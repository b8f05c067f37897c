import Fluent
import Foundation
import InterludeCore

/// Whose data an export of a study may hold: participants enrolled in it (taking part or finished), who share with
/// research and did not decline it in the study's consent, under their pseudonyms, never with name, email or date of
/// birth; with birth year and gender only when the study asks for them. A participant who withdrew, or stopped
/// sharing, is in no export made after.
package struct StudyExportScope: Sendable {
    struct Participant: Sendable {
        let enrollment: EnrollmentRecord
        let pseudonym: String
        let user: UserRecord
        /// Only when the study asks for them.
        let birthYear: String?
        let gender: String?

        var id: UUID { user.id! }
    }

    let grant: StudyGrant
    let database: any Database

    /// Throws forbidden unless the grant may export.
    package init(_ grant: StudyGrant, database: any Database) throws {
        try grant.require(.exportData)
        self.grant = grant
        self.database = database
    }

    func participants() async throws -> [Participant] {
        let enrollments = try await EnrollmentRecord.query(on: database)
            .filter(\.$study.$id == grant.studyID).filter(\.$status ~~ [EnrollmentStatus.active, .ended])
            .sort(\.$createdAt).all()
        let ids = enrollments.map { $0.$patient.id }
        let profiles = try await PatientProfileRecord.query(on: database).filter(\.$user.$id ~~ ids).all()
        let users = Dictionary(
            try await UserRecord.query(on: database).filter(\.$id ~~ ids).all().map { ($0.id!, $0) },
            uniquingKeysWith: { first, _ in first })
        let sharing = Dictionary(
            profiles.filter { StudyAccessPolicy.seesData(of: $0.shareWithResearch, as: grant.standing, in: grant.kind) }
                .map { ($0.$user.id, $0) },
            uniquingKeysWith: { first, _ in first })
        let declined = try await ConsentPeriods(database: database).declinedResearchSharing(
            among: ids, in: grant.studyID)
        let demographics = grant.study.asksDemographics
        return enrollments.compactMap { enrollment in
            guard !declined.contains(enrollment.$patient.id), let profile = sharing[enrollment.$patient.id],
                let user = users[enrollment.$patient.id]
            else { return nil }
            return Participant(
                enrollment: enrollment, pseudonym: profile.pseudonym, user: user,
                birthYear: demographics ? profile.dateOfBirth.map { String($0.prefix(4)) } : nil,
                gender: demographics ? profile.gender : nil)
        }
    }

    /// Records that the grant's holder asked for an export, or downloaded one, of these participants' data.
    func record(_ action: AuditAction, export: UUID, since: Date?, patients: [UUID]) async throws {
        let filter = since.map { "since=" + ISO8601DateFormatter().string(from: $0) } ?? "all"
        try await grant.record(action, patients: patients, target: "export:\(export.lowercasedText):\(filter)")
    }
}
