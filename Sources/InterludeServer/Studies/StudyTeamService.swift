import Fluent
import Foundation
import InterludeCore
import SQLKit

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
        let rows = try await StudyStaffRecord.query(on: database).filter(\.$study.$id == grant.studyID).with(\.$user).all()
        return rows.map { Member(user: $0.user, role: $0.role) }
            .sorted { ($0.role.rank, $0.user.email) < ($1.role.rank, $1.user.email) }
    }

    /// Adds the staff account with `email` to the team in `role`.
    func add(email: String, role: StudyRole, in grant: StudyGrant) async throws -> Member {
        try grant.require(.manageTeam)
        var validator = FieldValidator()
        let address = AccountFields.email(email, into: &validator)
        try validator.check()
        guard let user = try await UserRecord.query(on: database).filter(\.$email == address!.value).first(), user.role.isStaff
        else { throw AppError.field("email", .unknown) }
        try Self.check(role, for: user)
        let userID = try user.requireID()
        if try await membership(of: userID, in: grant.studyID, on: database) != nil { throw AppError.conflict(.alreadyOnTeam) }
        do {
            try await database.transaction { transaction in
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
        return try await database.transaction { transaction in
            try await Self.lock(grant.studyID, on: transaction)
            guard let member = try await membership(of: userID, in: grant.studyID, on: transaction) else { throw AppError.notFound }
            let user = try await member.$user.get(on: transaction)
            try Self.check(role, for: user)
            member.role = role
            try await member.save(on: transaction)
            try await keepOwner(of: grant.studyID, on: transaction)
            try await grant.record(.teamChanged, target: "staff:\(userID):\(role.rawValue)", on: transaction)
            return Member(user: user, role: role)
        }
    }

    /// Takes a member off the team; refused when they are its last owner.
    func remove(_ userID: UUID, in grant: StudyGrant) async throws {
        try grant.require(.manageTeam)
        try await database.transaction { transaction in
            try await Self.lock(grant.studyID, on: transaction)
            guard let member = try await membership(of: userID, in: grant.studyID, on: transaction) else { throw AppError.notFound }
            try await member.delete(on: transaction)
            try await keepOwner(of: grant.studyID, on: transaction)
            try await grant.record(.teamChanged, target: "staff:\(userID):removed", on: transaction)
        }
    }

    private func membership(of userID: UUID, in studyID: UUID, on database: any Database) async throws -> StudyStaffRecord? {
        try await StudyStaffRecord.query(on: database).filter(\.$study.$id == studyID).filter(\.$user.$id == userID).first()
    }

    /// Checked after the change is written, inside its transaction, so two changes at once cannot both leave an
    /// owner behind them and none in the end.
    private func keepOwner(of studyID: UUID, on database: any Database) async throws {
        let roles = try await StudyStaffRecord.query(on: database).filter(\.$study.$id == studyID).all().map(\.role)
        guard StudyTeam.hasOwner(roles) else { throw AppError.conflict(.lastOwner) }
    }

    /// Makes changes to one study's team wait for each other: the first statement of the transaction writes the
    /// study's row, so a second change waits for the first to commit (a row lock on PostgreSQL, the write lock on
    /// SQLite) instead of both reading the team before either writes.
    private static func lock(_ studyID: UUID, on database: any Database) async throws {
        guard let sql = database as? any SQLDatabase else { return }
        try await sql.raw("UPDATE \(ident: StudyRecord.schema) SET id = id WHERE id = \(bind: studyID)").run()
    }

    private static func check(_ role: StudyRole, for user: UserRecord) throws {
        guard StudyTeam.roles(for: user.role).contains(role) else { throw AppError.field("role", .notAllowed) }
    }
}

extension StudyRole {
    /// The order a team is listed in: owners, therapists, researchers, data managers.
    fileprivate var rank: Int { Self.allCases.firstIndex(of: self) ?? 0 }
}
