import FluentKit
import Foundation
import InterludeCore
import SQLKit

extension Statements {
    /// The patient's therapist as the patient sees them, when the patient is paired: one statement, since every sync
    /// asks.
    static func therapistContact(of patientID: UUID, on database: any Database) async throws -> TherapistProfiles
        .Contact?
    {
        try await sql(database).raw(
            """
            SELECT users.id, users.email, therapist_profiles.full_name, therapist_profiles.gender,
            therapist_profiles.office_address, therapist_profiles.phone, therapist_profiles.emergency_number
            FROM enrollments JOIN therapist_profiles ON therapist_profiles.user_id = enrollments.therapist_id
            JOIN users ON users.id = enrollments.therapist_id
            WHERE enrollments.patient_id = \(bind: patientID) AND enrollments.therapist_id IS NOT NULL
            AND enrollments.status = '\(unsafeRaw: EnrollmentStatus.active.rawValue)' LIMIT 1
            """
        ).first().map(TherapistProfiles.Contact.init)
    }
}

extension TherapistProfiles.Contact {
    fileprivate init(_ row: any SQLRow) throws {
        therapistID = try row.decode(column: "id", as: UUID.self)
        email = try row.decode(column: "email", as: String.self)
        fullName = try row.decode(column: "full_name", as: String.self)
        gender = try row.decode(column: "gender", as: String?.self)
        officeAddress = try row.decode(column: "office_address", as: String?.self)
        phone = try row.decode(column: "phone", as: String?.self)
        emergencyNumber = try row.decode(column: "emergency_number", as: String?.self)
    }
}

extension Statements {
    /// When each of the patients last sent an answer.
    static func lastAnswers(of patients: [UUID], on database: any Database) async throws -> [UUID: Date] {
        guard !patients.isEmpty else { return [:] }
        let rows = try await sql(database).select().column("patient_id")
            .column(SQLAlias(SQLFunction("max", args: SQLIdentifier("completed_at")), as: SQLIdentifier("last")))
            .from(ResponseRecord.schema).where("patient_id", .in, SQLBind.group(patients)).groupBy("patient_id").all()
        var last: [UUID: Date] = [:]
        for row in rows {
            last[try row.decode(column: "patient_id", as: UUID.self)] = try row.decode(column: "last", as: Date.self)
        }
        return last
    }
}
