import Fluent
import Foundation
import InterludeCore
import Vapor

/// The admin's console: staff accounts, the audit log and the texts the site publishes.
struct ConsoleAdminController {
    struct NewUserForm: Content {
        var email: String
        var name: String?
        var role: String
    }

    struct UserForm: Content {
        var name: String?
        var email: String?
    }

    struct SettingsForm: Content {
        var privacyVersion: String
        var privacyDe: String
        var privacyEn: String
        var imprintDe: String
        var imprintEn: String
    }

    static let auditPageSize = 100

    func register(on routes: any RoutesBuilder) {
        routes.get("users", use: users)
        routes.post("users", use: createUser)
        routes.post("users", ":userID", "active", use: setActive)
        routes.post("users", ":userID", "two-factor", "reset", use: resetTwoFactor)
        routes.post("users", ":userID", use: updateUser)
        routes.post("users", ":userID", "password", use: resetPassword)
        routes.post("users", ":userID", "delete", use: deleteUser)
        routes.get("audit", use: audit)
        routes.get("settings", use: showSettings)
        routes.post("settings", use: saveSettings)
        routes.post("settings", "two-factor", use: saveTwoFactorRequirement)
        routes.post("settings", "act", use: saveACTTexts)
        routes.post("settings", "name", use: saveInstallationName)
    }

    private func renderUsers(
        _ request: Request, created: AdminPages.CreatedUser? = nil,
        form: NewUserForm = .init(email: "", name: "", role: "therapist"),
        errors: FormErrors = FormErrors(), rowErrors: FormErrors = FormErrors(), rowUser: UUID? = nil,
        status: HTTPResponseStatus = .ok
    ) async throws -> Response {
        let content = try await pages(request).users(
            created: created, form: form, errors: errors, rowErrors: rowErrors, rowUser: rowUser)
        return try await request.renderConsole(
            "console/users", titleKey: "console.users.title", content: content, status: status)
    }

    private func pages(_ request: Request) throws -> AdminPages {
        AdminPages(admin: try request.consoleUser(.admin), database: request.db, services: request.services)
    }

    func users(_ request: Request) async throws -> Response {
        try await renderUsers(request)
    }

    func createUser(_ request: Request) async throws -> Response {
        let admin = try AdminGrant(try request.consoleUser(.admin), services: request.services)
        let form = try request.content.decode(NewUserForm.self)
        do {
            let created = try await StaffAccounts(database: request.db, services: request.services)
                .create(email: form.email, role: form.role, name: form.name, password: nil, by: admin)
            return try await renderUsers(
                request,
                created: AdminPages.CreatedUser(
                    email: created.user.email, oneTimePassword: created.oneTimePassword ?? ""),
                status: .created)
        } catch {
            guard let errors = FormErrors.from(error, request: request) else { throw error }
            return try await renderUsers(request, form: form, errors: errors, status: errors.status)
        }
    }

    func setActive(_ request: Request) async throws -> Response {
        let admin = try AdminGrant(try request.consoleUser(.admin), services: request.services)
        let active = try request.content.get(String.self, at: "active") == "true"
        guard let userID = request.parameters.get("userID", as: UUID.self) else { throw AppError.notFound }
        _ = try await StaffAccounts(database: request.db, services: request.services)
            .setActive(active, userID: userID, by: admin)
        return request.redirect(to: .users)
    }

    /// Changes a staff account's name and address.
    func updateUser(_ request: Request) async throws -> Response {
        let admin = try AdminGrant(try request.consoleUser(.admin), services: request.services)
        let userID = try Self.userID(request)
        let form = try request.content.decode(UserForm.self)
        do {
            _ = try await StaffAccounts(database: request.db, services: request.services)
                .update(userID, name: form.name, email: form.email, by: admin)
            return request.redirect(to: .users)
        } catch {
            guard let errors = FormErrors.from(error, request: request) else { throw error }
            return try await renderUsers(request, rowErrors: errors, rowUser: userID, status: errors.status)
        }
    }

    /// Gives a staff account a new one-time password and shows it once.
    func resetPassword(_ request: Request) async throws -> Response {
        let admin = try AdminGrant(try request.consoleUser(.admin), services: request.services)
        let userID = try Self.userID(request)
        let accounts = StaffAccounts(database: request.db, services: request.services)
        let password = try await accounts.resetPassword(userID, by: admin)
        let email = try await accounts.account(userID).email
        return try await renderUsers(request, created: .init(email: email, oneTimePassword: password, reset: true))
    }

    /// Deletes a staff account once the admin confirmed it.
    func deleteUser(_ request: Request) async throws -> Response {
        let admin = try AdminGrant(try request.consoleUser(.admin), services: request.services)
        let userID = try Self.userID(request)
        do {
            guard (try? request.content.get(String.self, at: "confirm")) != nil else {
                throw AppError.field("confirm", .required)
            }
            try await StaffAccounts(database: request.db, services: request.services).delete(userID, by: admin)
            return request.redirect(to: .users)
        } catch {
            guard let errors = FormErrors.from(error, request: request) else { throw error }
            return try await renderUsers(request, rowErrors: errors, rowUser: userID, status: errors.status)
        }
    }

    private static func userID(_ request: Request) throws -> UUID {
        guard let userID = request.parameters.get("userID", as: UUID.self) else { throw AppError.notFound }
        return userID
    }

    func audit(_ request: Request) async throws -> Response {
        let content = try await pages(request).audit(
            actor: request.query[String.self, at: "actor"], patient: request.query[String.self, at: "patient"],
            before: request.query[String.self, at: "before"])
        return try await request.renderConsole("console/audit", titleKey: "console.audit.title", content: content)
    }

    func showSettings(_ request: Request) async throws -> Response {
        _ = try request.consoleUser(.admin)
        return try await renderSettings(request, saved: (try? request.query.get(String.self, at: "saved")) != nil)
    }

    private func renderSettings(
        _ request: Request, form: SettingsForm? = nil, act: [String: String]? = nil, installationName: String? = nil,
        saved: Bool = false, errors: FormErrors = FormErrors(), status: HTTPResponseStatus = .ok
    ) async throws -> Response {
        let content = try await pages(request).settings(
            form: form, act: act, installationName: installationName, saved: saved, errors: errors)
        return try await request.renderConsole(
            "console/settings", titleKey: "console.settings.title", content: content, status: status)
    }

    func saveSettings(_ request: Request) async throws -> Response {
        let admin = try AdminGrant(try request.consoleUser(.admin), services: request.services)
        let form = try request.content.decode(SettingsForm.self)
        do {
            try await SiteTexts(database: request.db).update(
                privacyPolicy: [.de: form.privacyDe, .en: form.privacyEn], version: form.privacyVersion,
                imprint: [.de: form.imprintDe, .en: form.imprintEn], by: admin)
            return request.redirect(to: .settings, query: [("saved", "1")])
        } catch {
            guard let errors = FormErrors.from(error, request: request) else { throw error }
            return try await renderSettings(request, form: form, errors: errors, status: errors.status)
        }
    }

    /// Stores the pages about ACT's six core processes, every one in German and English.
    func saveACTTexts(_ request: Request) async throws -> Response {
        let admin = try AdminGrant(try request.consoleUser(.admin), services: request.services)
        let form = try request.content.decode([String: String].self)
        var texts: [ACTProcess: [Language: String]] = [:]
        for process in ACTProcess.allCases {
            for language in Language.allCases {
                texts[process, default: [:]][language] = form["\(process.rawValue)_\(language.rawValue)"] ?? ""
            }
        }
        do {
            try await SiteTexts(database: request.db).update(act: texts, by: admin)
            return request.redirect(to: .settings, query: [("saved", "1")])
        } catch {
            guard let errors = FormErrors.from(error, request: request) else { throw error }
            return try await renderSettings(request, act: form, errors: errors, status: errors.status)
        }
    }

    /// Names the installation for the front page.
    func saveInstallationName(_ request: Request) async throws -> Response {
        let admin = try AdminGrant(try request.consoleUser(.admin), services: request.services)
        let name = (try? request.content.get(String.self, at: "installationName")) ?? ""
        do {
            try await SiteTexts(database: request.db).setInstallationName(name, by: admin)
            return request.redirect(to: .settings, query: [("saved", "1")])
        } catch {
            guard let errors = FormErrors.from(error, request: request) else { throw error }
            return try await renderSettings(request, installationName: name, errors: errors, status: errors.status)
        }
    }

    func saveTwoFactorRequirement(_ request: Request) async throws -> Response {
        let admin = try AdminGrant(try request.consoleUser(.admin), services: request.services)
        let required = (try? request.content.get(String.self, at: "required")) == "on"
        try await TwoFactorService(database: request.db, services: request.services).setRequired(required, grant: admin)
        return request.redirect(to: .settings, query: [("saved", "1")])
    }

    func resetTwoFactor(_ request: Request) async throws -> Response {
        let admin = try AdminGrant(try request.consoleUser(.admin), services: request.services)
        guard let userID = request.parameters.get("userID", as: UUID.self),
            let user = try await UserRecord.find(userID, on: request.db)
        else { throw AppError.notFound }
        try await TwoFactorService(database: request.db, services: request.services).reset(user, grant: admin)
        return request.redirect(to: .users)
    }
}
