import Fluent
import Foundation
import InterludeCore

/// Decides what a staff member may do with a study, from `StudyAccessPolicy` and nothing else. Someone without
/// any standing in a study learns nothing about it (not found); a member whose standing lacks the permission is
/// refused (forbidden).
package struct StudyAccess: Sendable {
    let database: any Database
    let services: AppServices

    package init(database: any Database, services: AppServices) {
        self.database = database
        self.services = services
    }

    private var now: Date { services.clock.now }

    /// The person's standing in the study: owner, researcher or therapist by membership, admin by role; nil for
    /// anyone else, patients always.
    func standing(of user: UserRecord, in studyID: UUID) async throws -> StudyStanding? {
        guard user.role.isStaff else { return nil }
        let membership = try await StudyStaffRecord.query(on: database)
            .filter(\.$study.$id == studyID).filter(\.$user.$id == user.requireID()).first()
        if let role = membership.map(\.role) { return StudyStanding(role) }
        return user.role == .admin ? .admin : nil
    }

    /// The study, with proof that `user` holds `permission` in it.
    package func require(_ permission: StudyPermission, in studyID: UUID, by user: UserRecord) async throws
        -> StudyGrant
    {
        guard let study = try await StudyRecord.find(studyID, on: database),
            let standing = try await standing(of: user, in: studyID)
        else { throw AppError.notFound }
        let grant = StudyGrant(
            study: study, studyID: studyID, kind: study.kind, standing: standing, viewer: user,
            audit: AuditLog(database: database, services: services))
        // A practice is invisible to everyone but its therapist, as it is to patients.
        guard grant.allows(.viewStudy) else { throw AppError.notFound }
        guard grant.allows(permission) else { throw AppError.forbidden(.notAllowed) }
        return grant
    }

    /// The studies of `kind` in which `user` holds `permission`, newest first.
    func studies(where permission: StudyPermission, for user: UserRecord, kind: StudyKind) async throws -> [StudyRecord]
    {
        guard user.role.isStaff else { return [] }
        let query = StudyRecord.query(on: database).sort(\.$createdAt, .descending)
        switch kind {
        case .practice: query.filter(\.$joinMode == JoinMode.pairingCode)
        case .research: query.filter(\.$joinMode != JoinMode.pairingCode)
        }
        if user.role == .admin && StudyAccessPolicy.allows(.admin, permission, in: kind) {
            return try await query.all()
        }
        let memberships = try await StudyStaffRecord.query(on: database).filter(\.$user.$id == user.requireID()).all()
        let allowed = memberships.filter { StudyAccessPolicy.allows(StudyStanding($0.role), permission, in: kind) }
        query.filter(\.$id ~~ allowed.map { $0.$study.id })
        return try await query.all()
    }
}

/// Proof that a staff member may do something with one study, and the way every change they make there is written
/// to the audit log.
package struct StudyGrant: Sendable {
    let study: StudyRecord
    let studyID: UUID
    let kind: StudyKind
    let standing: StudyStanding
    let viewer: UserRecord
    let audit: AuditLog

    func allows(_ permission: StudyPermission) -> Bool {
        StudyAccessPolicy.allows(standing, permission, in: kind)
    }

    /// Refuses (forbidden) what the standing does not allow.
    func require(_ permission: StudyPermission) throws {
        guard allows(permission) else { throw AppError.forbidden(.notAllowed) }
    }

    /// Records a change to the study's set-up, or a read of its participants; in the transaction that makes the
    /// change when one is given.
    func record(_ action: AuditAction, patients: [UUID] = [], target: String? = nil, on database: (any Database)? = nil)
        async throws
    {
        let target = target.map { "study:\(studyID):\($0)" } ?? "study:\(studyID)"
        let log = database.map { AuditLog(database: $0, services: audit.services) } ?? audit
        if patients.isEmpty {
            try await log.record(actor: viewer, action: action, target: target)
        } else {
            try await log.record(actor: viewer, action: action, patients: patients, target: target)
        }
    }
}

extension StudyRecord {
    var kind: StudyKind { StudyKind(joinMode: joinMode) }
}
