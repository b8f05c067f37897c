import Fluent
import Foundation
import InterludeCore

// MARK: - Administration

extension APIHandler {
    func listUsers(_ input: Operations.ListUsers.Input) async throws -> Operations.ListUsers.Output {
        let context = try APIContext.current()
        _ = try await context.user(.admin)
        let request = try PageRequest(cursor: input.query.cursor, limit: input.query.limit)
        let page = ListPage(of: try await context.staff.list(), request, moment: \.createdAt, id: { $0.id! })
        return .ok(
            .init(
                headers: .init(nextCursor: page.next),
                body: .json(try page.items.map(Components.Schemas.StaffUser.init))))
    }

    func createUser(_ input: Operations.CreateUser.Input) async throws -> Operations.CreateUser.Output {
        let context = try APIContext.current()
        guard case .json(let body) = input.body else { throw AppError.malformedRequest }
        let admin = try AdminGrant(try await context.user(.admin), services: context.services)
        let created = try await context.staff.create(
            email: body.email, role: body.role.rawValue, name: body.name, password: body.password, by: admin)
        return .created(
            .init(body: .json(.init(user: try .init(created.user), oneTimePassword: created.oneTimePassword))))
    }

    func updateUser(_ input: Operations.UpdateUser.Input) async throws -> Operations.UpdateUser.Output {
        let context = try APIContext.current()
        guard case .json(let body) = input.body else { throw AppError.malformedRequest }
        try checkLimits([
            (body.name, "name", StaffAccounts.nameMaxLength), (body.email, "email", EmailAddress.maxLength),
        ])
        let admin = try AdminGrant(try await context.user(.admin), services: context.services)
        let userID = try pathID(input.path.userId)
        var user = try await context.staff.update(userID, name: body.name, email: body.email, by: admin)
        if let active = body.active { user = try await context.staff.setActive(active, userID: userID, by: admin) }
        return .ok(.init(body: .json(try .init(user))))
    }

    func deleteUser(_ input: Operations.DeleteUser.Input) async throws -> Operations.DeleteUser.Output {
        let context = try APIContext.current()
        let admin = try AdminGrant(try await context.user(.admin), services: context.services)
        try await context.staff.delete(try pathID(input.path.userId), by: admin)
        return .noContent(.init())
    }

    func resetUserPassword(_ input: Operations.ResetUserPassword.Input) async throws
        -> Operations.ResetUserPassword.Output
    {
        let context = try APIContext.current()
        let admin = try AdminGrant(try await context.user(.admin), services: context.services)
        let password = try await context.staff.resetPassword(try pathID(input.path.userId), by: admin)
        return .ok(.init(body: .json(.init(oneTimePassword: password))))
    }
}

extension APIContext {
    var staff: StaffAccounts { StaffAccounts(database: database, services: services) }
}
