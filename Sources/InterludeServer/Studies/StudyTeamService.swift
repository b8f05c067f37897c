import Fluent
import Foundation
import InterludeCore

/// A research study's team: who works on it and in which role. The owner (or an administrator) adds staff by
/// their address, changes their roles and removes them; the study always keeps an owner. Every change is audited.
struct StudyTeamService: Sendable {
    let database: any Database
    let services: AppServices

    struct Member: Sendable {
        let user: UserRecord
        let role: StudyRole
    }

    func members(of grant: StudyGrant) async throws -> [Member] {
        try grant.require(.viewTeam)
        let rows = try await StudyStaffRecord.query(on: database).filter(\.$study.$id == grant.studyID).with(\.$user)
            .all()
        return rows.map { Member(user: $0.user, role: $0.role) }
            .sorted { ($0.role.rank, $0.user.email) < ($1.role.rank, $1.user.email) }
    }

    /// Adds the staff account with `email` to the team in `role`.
    func add(email: String, role: StudyRole, in grant: StudyGrant) async throws -> Member {
        try grant.require(.manageTeam)
        var validator = FieldValidator()
        let address = AccountFields.email(email, into: &validator)
        try validator.check()
        guard let user = try await UserRecord.query(on: database).filter(\.$email == address!.value).first(),
            user.role.isStaff
        else { throw AppError.field("email", .unknown) }
        try Self.check(role, for: user)
        let userID = try user.requireID()
        if try await membership(of: userID, in: grant.studyID, on: database) != nil {
            throw AppError.conflict(.alreadyOnTeam)
        }
        do {
            try await database.atomically { transaction in
                try await StudyStaffRecord(studyID: grant.studyID, userID: userID, role: role).create(on: transaction)
                try await grant.record(.teamChanged, target: "staff:\(userID):\(role.rawValue)", on: transaction)
            }
        } catch let error as any DatabaseError where error.isConstraintFailure {
            throw AppError.conflict(.alreadyOnTeam)
        }
        return Member(user: user, role: role)
    }

    /// Gives a member another role; refused when the study would be left without an owner.
    func change(_ userID: UUID, to role: StudyRole, in grant: StudyGrant) async throws -> Member {
        try grant.require(.manageTeam)
        guard let member = try await membership(of: userID, in: grant.studyID, on: database) else {
            throw AppError.notFound
        }
        let user = try await member.$user.get(on: database)
        try Self.check(role, for: user)
        try await guarded(grant.studyID) { database in
            let changed = try await Statements.changeRole(
                ofMember: try member.requireID(), to: role, keepingAnOwnerOf: grant.studyID, on: database)
            guard changed else { throw AppError.conflict(.lastOwner) }
            try await grant.record(.teamChanged, target: "staff:\(userID):\(role.rawValue)", on: database)
        }
        return Member(user: user, role: role)
    }

    /// Takes a member off the team; refused when they are its last owner.
    func remove(_ userID: UUID, in grant: StudyGrant) async throws {
        try grant.require(.manageTeam)
        guard let member = try await membership(of: userID, in: grant.studyID, on: database) else {
            throw AppError.notFound
        }
        try await guarded(grant.studyID) { database in
            let removed = try await Statements.removeMember(
                try member.requireID(), keepingAnOwnerOf: grant.studyID, on: database)
            guard removed else { throw AppError.conflict(.lastOwner) }
            try await grant.record(.teamChanged, target: "staff:\(userID):removed", on: database)
        }
    }

    private func membership(of userID: UUID, in studyID: UUID, on database: any Database) async throws
        -> StudyStaffRecord?
    {
        try await StudyStaffRecord.query(on: database).filter(\.$study.$id == studyID).filter(\.$user.$id == userID)
            .first()
    }

    /// On PostgreSQL, changes to one study's team wait for each other behind a lock on the study's row, so two
    /// removals at once cannot each count the other as the remaining owner. SQLite writes one statement at a time,
    /// and the conditional statement alone decides.
    private func guarded(_ studyID: UUID, _ change: @escaping @Sendable (any Database) async throws -> Void)
        async throws
    {
        guard Statements.isPostgres(database) else {
            return try await change(database)
        }
        try await database.atomically { transaction in
            try await Statements.lockStudy(studyID, on: transaction)
            try await change(transaction)
        }
    }

    private static func check(_ role: StudyRole, for user: UserRecord) throws {
        guard StudyTeam.roles(for: user.role).contains(role) else { throw AppError.field("role", .notAllowed) }
    }
}

extension StudyRole {
    /// The order a team is listed in: owners, therapists, researchers, data managers.
    var rank: Int { Self.allCases.firstIndex(of: self) ?? 0 }
}
