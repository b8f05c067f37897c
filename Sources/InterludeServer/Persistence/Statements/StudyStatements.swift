import FluentKit
import Foundation
import InterludeCore
import SQLKit

extension Statements {
    /// One study's rules, or every study's (nil); oldest first. With `participant`, only while that patient takes part
    /// in the study. Written out: every submission to a study reads them.
    static func rules(in studyID: UUID?, participant: UUID?, on database: any Database) async throws -> [RuleRecord] {
        var query: SQLQueryString = "SELECT * FROM study_rules"
        if let studyID { query = query + " WHERE study_id = \(bind: studyID)" }
        if let studyID, let participant {
            query =
                query + " AND EXISTS (SELECT 1 FROM enrollments WHERE patient_id = \(bind: participant)"
                + " AND study_id = \(bind: studyID) AND status = \(bind: EnrollmentStatus.active.rawValue))"
        }
        return try await database.models(RuleRecord.self, query + " ORDER BY created_at")
    }

    /// The person's decision in force on a study's consent: neither replaced by a later one nor revoked. Written out:
    /// every submission to a study that sends context reads it.
    static func consentInForce(of patientID: UUID, in studyID: UUID, on database: any Database) async throws
        -> ConsentRecord?
    {
        try await database.models(
            ConsentRecord.self,
            """
            SELECT * FROM consents WHERE user_id = \(bind: patientID) AND study_id = \(bind: studyID) \
            AND document = \(bind: ConsentRecord.Document.studyConsent.rawValue) AND revoked_at IS NULL \
            AND replaced_at IS NULL ORDER BY granted_at DESC LIMIT 1
            """
        ).first
    }

    /// A study's consent versions for everybody and for the person's arm in order, each with whether it needs a new
    /// answer and whether the person's decision in force names it: only what decides, in one statement, as every
    /// submission to a study asks.
    static func consentVersionsAgreed(
        by patientID: UUID, in studyID: UUID, on database: any Database
    ) async throws -> [(sequence: Int, reconsentRequired: Bool, agreed: Bool)] {
        try await sql(database).raw(
            """
            SELECT v."sequence" AS "sequence", v.reconsent_required AS reconsent_required, CASE WHEN v.version = (\
            SELECT c.version FROM consents c WHERE c.user_id = \(bind: patientID) AND c.study_id = \(bind: studyID) \
            AND c.document = \(bind: ConsentRecord.Document.studyConsent.rawValue) AND c.revoked_at IS NULL \
            AND c.replaced_at IS NULL ORDER BY c.granted_at DESC LIMIT 1) THEN 1 ELSE 0 END AS agreed \
            FROM consent_versions v WHERE v.study_id = \(bind: studyID) AND (v.arm IS NULL OR v.arm = (\
            SELECT e.arm FROM enrollments e WHERE e.patient_id = \(bind: patientID) AND e.study_id = \(bind: studyID) \
            AND e.status IN (\(bind: EnrollmentStatus.active.rawValue), \(bind: EnrollmentStatus.requested.rawValue)) \
            LIMIT 1)) ORDER BY v."sequence"
            """
        ).all().map { row in
            (
                sequence: try row.decode(column: "sequence", as: Int.self),
                reconsentRequired: try row.decode(column: "reconsent_required", as: Bool.self),
                agreed: try row.decode(column: "agreed", as: Int.self) == 1
            )
        }
    }
}

extension Statements {
    /// Gives a team member another role; unless the new role is owner, only when the study keeps an owner. One
    /// statement, so the condition holds however many changes arrive at once. False when nothing changed.
    static func changeRole(
        ofMember id: UUID, to role: StudyRole, keepingAnOwnerOf studyID: UUID, on database: any Database
    ) async throws -> Bool {
        try await database.updateRow(
            StudyStaffRecord.schema, id: id, set: ["role": SQLBind(role.rawValue)],
            if: { role == .owner ? $0 : $0.where(keepsAnOwner(studyID)) })
    }

    /// Takes a member off a study's team when the study keeps an owner; false when nothing was removed.
    static func removeMember(_ id: UUID, keepingAnOwnerOf studyID: UUID, on database: any Database) async throws -> Bool
    {
        try await database.deleteRow(StudyStaffRecord.schema, id: id, if: { $0.where(keepsAnOwner(studyID)) })
    }

    /// True for a team row that is not an owner's, or whose study has another owner.
    private static func keepsAnOwner(_ studyID: UUID) -> any SQLExpression {
        SQLQueryString(
            "(role <> \(bind: StudyRole.owner.rawValue) OR (SELECT COUNT(*) FROM \(ident: StudyStaffRecord.schema) AS others WHERE others.study_id = \(bind: studyID) AND others.role = \(bind: StudyRole.owner.rawValue)) > 1)"
        )
    }

    /// On PostgreSQL, locks a study's row for the running transaction, so changes to its team wait for each other.
    static func lockStudy(_ studyID: UUID, on transaction: any Database) async throws {
        _ = try await sql(transaction)
            .raw("SELECT id FROM \(ident: StudyRecord.schema) WHERE id = \(bind: studyID) FOR UPDATE").all()
    }
}
