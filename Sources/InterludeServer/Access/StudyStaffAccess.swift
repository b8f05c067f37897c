import Fluent
import Foundation
import InterludeCore

/// Who may do what with a study's rules, templates and messages: every staff member of the study reads them;
/// its owner and researchers (and admins) change them. Practices count: their therapist owns them.
struct StudyStaffAccess: Sendable {
    let database: any Database

    /// The staff member's role in the study (nil for an admin); not found for anyone outside it.
    @discardableResult
    func role(in studyID: UUID, of staff: UserRecord) async throws -> StudyRole? {
        if staff.roleValue == .admin {
            guard try await StudyRecord.find(studyID, on: database) != nil else { throw AppError.notFound }
            return nil
        }
        guard
            let membership = try await StudyStaffRecord.query(on: database)
                .filter(\.$study.$id == studyID).filter(\.$user.$id == staff.requireID()).first()
        else { throw AppError.notFound }
        return StudyRole(rawValue: membership.role)
    }

    func requireEditor(of studyID: UUID, _ staff: UserRecord) async throws {
        let role = try await role(in: studyID, of: staff)
        guard staff.roleValue == .admin || role == .owner || role == .researcher else {
            throw AppError.forbidden(.notAllowed)
        }
    }
}
