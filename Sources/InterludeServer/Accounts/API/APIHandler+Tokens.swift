import Foundation
import InterludeCore

// MARK: - Personal access tokens

extension APIHandler {
    func listAccessTokens(_ input: Operations.ListAccessTokens.Input) async throws -> Operations.ListAccessTokens.Output
    {
        let context = try APIContext.current()
        let user = try await context.user(.therapist, .researcher, .admin)
        let request = try PageRequest(cursor: input.query.cursor, limit: input.query.limit)
        let page = ListPage(
            of: try await context.accessTokens.tokens(of: user), request, moment: \.createdAt, id: { $0.id! })
        return .ok(
            .init(headers: .init(nextCursor: page.next), body: .json(try page.items.map { try .init($0, secret: nil) }))
        )
    }

    func createAccessToken(_ input: Operations.CreateAccessToken.Input) async throws
        -> Operations.CreateAccessToken.Output
    {
        let context = try APIContext.current()
        guard case .json(let body) = input.body else { throw AppError.malformedRequest }
        let user = try await context.user(.therapist, .researcher, .admin)
        try checkLimits([(body.name, "name", AccessTokenRules.nameMaxLength)])
        var studies: [UUID] = []
        for (index, raw) in body.studyIds.enumerated() {
            guard let id = UUID(uuidString: raw) else { throw AppError.field("studyIds.\(index)", .invalidFormat) }
            studies.append(id)
        }
        let created = try await context.accessTokens.create(
            for: user, name: body.name, scope: .exportsRead, studyIDs: studies, expiresInDays: body.expiresInDays)
        return .created(.init(body: .json(try .init(created.record, secret: created.secret))))
    }

    func revokeAccessToken(_ input: Operations.RevokeAccessToken.Input) async throws
        -> Operations.RevokeAccessToken.Output
    {
        let context = try APIContext.current()
        let user = try await context.user(.therapist, .researcher, .admin)
        try await context.accessTokens.revoke(try pathID(input.path.tokenId), of: user)
        return .noContent
    }
}

extension APIContext {
    var accessTokens: AccessTokenService { AccessTokenService(database: database, services: services) }
}

extension Components.Schemas.AccessToken {
    init(_ token: AccessTokenRecord, secret: String?) throws {
        self.init(
            id: try token.requireID().uuidString, name: token.name, scope: .exports_colon_read,
            studyIds: token.studies.map(\.uuidString), createdAt: token.createdAt, expiresAt: token.expiresAt,
            lastUsedAt: token.lastUsedAt, token: secret)
    }
}
