import Fluent
import Foundation
import InterludeCore

/// Personal access tokens: made by staff for scripts that fetch exports, shown once, kept as a hash, revoked at
/// will. A token is only ever as strong as its holder: each use checks again that the holder may export the study.
struct AccessTokenService: Sendable {
    let database: any Database
    let services: AppServices

    private var now: Date { services.clock.now }

    struct Created: Sendable {
        let record: AccessTokenRecord
        let secret: String
    }

    /// A new token for `user` on `studyIDs`, each of which the user must be allowed to export.
    func create(
        for user: UserRecord, name rawName: String, scope: AccessTokenScope, studyIDs: [UUID], expiresInDays: Int
    ) async throws -> Created {
        guard user.role.isStaff else { throw AppError.forbidden(.notAllowed) }
        var validator = FieldValidator()
        let name = rawName.trimmingCharacters(in: .whitespacesAndNewlines)
        if name.isEmpty { validator.add("name", .required) }
        validator.limit(name, field: "name", maxLength: AccessTokenRules.nameMaxLength)
        if studyIDs.isEmpty { validator.add("studyIds", .required) }
        if studyIDs.count > AccessTokenRules.maxStudies { validator.add("studyIds", .outOfRange) }
        if !AccessTokenRules.lifetimeDays.contains(expiresInDays) { validator.add("expiresInDays", .outOfRange) }
        try validator.check()
        let access = StudyAccess(database: database, services: services)
        for (index, studyID) in studyIDs.enumerated() {
            do {
                _ = try await access.require(.exportData, in: studyID, by: user)
            } catch AppError.notFound, AppError.forbidden {
                throw AppError.field("studyIds.\(index)", .notAllowed)
            }
        }
        let secret = AccessTokenRules.prefix + SecretToken.generate().value
        let record = try AccessTokenRecord(
            userID: try user.requireID(), name: name, scope: scope,
            studyIDs: Array(Set(studyIDs)).sorted { $0.uuidString < $1.uuidString },
            tokenHash: SecretToken.hash(secret), expiresAt: now.addingTimeInterval(Double(expiresInDays) * 86_400),
            now: now)
        try await record.create(on: database)
        return Created(record: record, secret: secret)
    }

    func tokens(of user: UserRecord) async throws -> [AccessTokenRecord] {
        try await AccessTokenRecord.query(on: database).filter(\.$user.$id == user.requireID())
            .sort(\.$createdAt, .descending).all()
    }

    func revoke(_ id: UUID, of user: UserRecord) async throws {
        guard let token = try await AccessTokenRecord.find(id, on: database), token.$user.id == user.id else {
            throw AppError.notFound
        }
        try await token.delete(on: database)
    }

    /// The holder of a live token with `scope`, and the studies it reaches; nil for anything else.
    func authenticate(_ secret: String, scope: AccessTokenScope) async throws -> (user: UserRecord, studies: Set<UUID>)?
    {
        guard secret.hasPrefix(AccessTokenRules.prefix), secret.count <= 200,
            let token = try await AccessTokenRecord.query(on: database).filter(\.$tokenHash == SecretToken.hash(secret))
                .filter(\.$expiresAt > now).with(\.$user).first(),
            token.scope == scope, token.user.deactivatedAt == nil, token.user.role.isStaff
        else { return nil }
        if token.lastUsedAt.map({ now.timeIntervalSince($0) > SessionService.activityResolution }) ?? true {
            token.lastUsedAt = now
            try await token.save(on: database)
        }
        return (token.user, Set(token.studies))
    }
}
