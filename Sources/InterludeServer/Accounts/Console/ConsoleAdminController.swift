import Fluent
import Foundation
import InterludeCore
import Vapor

/// The admin's console: staff accounts, the audit log and the texts the site publishes.
struct ConsoleAdminController {
    struct UserRow: Encodable, Sendable {
        var id: String
        var email: String
        var name: String?
        var role: String
        var active: Bool
        var createdAt: String
        var isSelf: Bool
        var twoFactor: Bool
    }

    struct UsersContent: Encodable, Sendable {
        var users: [UserRow]
        var created: CreatedUser?
        var form: NewUserForm
        var errors: FormErrors
    }

    struct CreatedUser: Encodable, Sendable {
        var email: String
        var oneTimePassword: String
    }

    struct NewUserForm: Content {
        var email: String
        var name: String?
        var role: String
    }

    struct AuditRow: Encodable, Sendable {
        var when: String
        var actor: String
        var action: String
        var patient: String
        var target: String
    }

    struct AuditContent: Encodable, Sendable {
        struct Actor: Encodable, Sendable {
            var id: String
            var email: String
            var selected: Bool
        }

        var events: [AuditRow]
        var actors: [Actor]
        var patient: String
        var olderLink: String?
        var patientNotFound: Bool
    }

    struct SettingsContent: Encodable, Sendable {
        var privacyVersion: String
        var privacyDe: String
        var privacyEn: String
        var imprintDe: String
        var imprintEn: String
        var twoFactorRequired: Bool
        var saved: Bool
        var errors: FormErrors
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
        routes.get("audit", use: audit)
        routes.get("settings", use: showSettings)
        routes.post("settings", use: saveSettings)
        routes.post("settings", "two-factor", use: saveTwoFactorRequirement)
    }

    private func renderUsers(
        _ request: Request, created: CreatedUser? = nil, form: NewUserForm = .init(email: "", name: "", role: "therapist"),
        errors: FormErrors = FormErrors(), status: HTTPResponseStatus = .ok
    ) async throws -> Response {
        let admin = try request.consoleUser(.admin)
        let display = admin.dateDisplay
        let localizer = request.services.localizer
        let rows = try await StaffAccounts(database: request.db, services: request.services).list().map { user in
            UserRow(
                id: try user.requireID().uuidString, email: user.email, name: user.name,
                role: localizer.text("role.\(user.role.rawValue)", admin.language), active: user.deactivatedAt == nil,
                createdAt: display.dateTime(user.createdAt), isSelf: user.id == admin.id, twoFactor: user.totpSecret != nil)
        }
        return try await request.renderConsole(
            "console/users", titleKey: "console.users.title",
            content: UsersContent(users: rows, created: created, form: form, errors: errors), status: status)
    }

    func users(_ request: Request) async throws -> Response {
        try await renderUsers(request)
    }

    func createUser(_ request: Request) async throws -> Response {
        let admin = try AdminGrant(try request.consoleUser(.admin), now: request.services.clock.now)
        let form = try request.content.decode(NewUserForm.self)
        do {
            guard form.role == Role.therapist.rawValue || form.role == Role.researcher.rawValue else {
                throw AppError.field("role", .invalidValue)
            }
            let created = try await StaffAccounts(database: request.db, services: request.services)
                .create(email: form.email, role: form.role, name: form.name, password: nil, by: admin)
            return try await renderUsers(
                request,
                created: CreatedUser(email: created.user.email, oneTimePassword: created.oneTimePassword ?? ""),
                status: .created)
        } catch {
            guard let errors = FormErrors.from(error, request: request) else { throw error }
            return try await renderUsers(request, form: form, errors: errors, status: errors.status)
        }
    }

    func setActive(_ request: Request) async throws -> Response {
        let admin = try AdminGrant(try request.consoleUser(.admin), now: request.services.clock.now)
        let active = try request.content.get(String.self, at: "active") == "true"
        guard let userID = request.parameters.get("userID", as: UUID.self) else { throw AppError.notFound }
        _ = try await StaffAccounts(database: request.db, services: request.services)
            .setActive(active, userID: userID, by: admin)
        return request.redirect(to: .users)
    }

    func audit(_ request: Request) async throws -> Response {
        let admin = try request.consoleUser(.admin)
        let display = admin.dateDisplay
        let actorFilter = (try? request.query.get(String.self, at: "actor")).flatMap(UUID.init(uuidString:))
        let patientFilter = ((try? request.query.get(String.self, at: "patient")) ?? "")
            .trimmingCharacters(in: .whitespaces).uppercased()
        let before = (try? request.query.get(String.self, at: "before")).flatMap(AuditReader.Cursor.init)
        let log = AuditReader(database: request.db)
        var patientID: UUID?
        var patientNotFound = false
        if !patientFilter.isEmpty {
            patientID = try await log.patientID(forPseudonym: patientFilter)
            patientNotFound = patientID == nil
        }
        let events =
            patientNotFound
            ? []
            : try await log.events(
                actor: actorFilter, patient: patientID, before: before, limit: Self.auditPageSize)
        let staff = try await StaffAccounts(database: request.db, services: request.services).list()
        let names = try await log.names(for: events)
        let localizer = request.services.localizer
        let rows = events.map { event in
            AuditRow(
                when: display.dateTime(event.occurredAt), actor: names.actors[event.actorID] ?? event.actorID.uuidString,
                action: localizer.text("audit.\(event.action)", admin.language),
                patient: event.subjectID.map { names.patients[$0] ?? localizer.text("audit.erased", admin.language) }
                    ?? "",
                target: event.target ?? "")
        }
        var olderLink: String?
        if events.count == Self.auditPageSize, let last = events.last {
            var query = [("before", AuditReader.Cursor(last).text)]
            if let actorFilter { query.append(("actor", actorFilter.uuidString)) }
            if !patientFilter.isEmpty { query.append(("patient", patientFilter)) }
            olderLink = ConsoleURL.audit.with(query)
        }
        return try await request.renderConsole(
            "console/audit", titleKey: "console.audit.title",
            content: AuditContent(
                events: rows,
                actors: try staff.map {
                    .init(id: try $0.requireID().uuidString, email: $0.email, selected: $0.id == actorFilter)
                },
                patient: patientFilter, olderLink: olderLink, patientNotFound: patientNotFound))
    }

    func showSettings(_ request: Request) async throws -> Response {
        _ = try request.consoleUser(.admin)
        return try await renderSettings(request, saved: (try? request.query.get(String.self, at: "saved")) != nil)
    }

    private func renderSettings(
        _ request: Request, form: SettingsForm? = nil, saved: Bool = false, errors: FormErrors = FormErrors(),
        status: HTTPResponseStatus = .ok
    ) async throws -> Response {
        let texts = SiteTexts(database: request.db)
        let localizer = request.services.localizer
        let current = try await SettingsForm(
            privacyVersion: texts.privacyPolicyVersion(),
            privacyDe: texts.text(.privacyPolicy, .de, localizer: localizer),
            privacyEn: texts.text(.privacyPolicy, .en, localizer: localizer),
            imprintDe: texts.text(.imprint, .de, localizer: localizer),
            imprintEn: texts.text(.imprint, .en, localizer: localizer))
        let shown = form ?? current
        return try await request.renderConsole(
            "console/settings", titleKey: "console.settings.title",
            content: SettingsContent(
                privacyVersion: shown.privacyVersion, privacyDe: shown.privacyDe, privacyEn: shown.privacyEn,
                imprintDe: shown.imprintDe, imprintEn: shown.imprintEn,
                twoFactorRequired: try await TwoFactorService(database: request.db, services: request.services).isRequired(),
                saved: saved, errors: errors),
            status: status)
    }

    func saveSettings(_ request: Request) async throws -> Response {
        let admin = try AdminGrant(try request.consoleUser(.admin), now: request.services.clock.now)
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

    func saveTwoFactorRequirement(_ request: Request) async throws -> Response {
        let admin = try AdminGrant(try request.consoleUser(.admin), now: request.services.clock.now)
        let required = (try? request.content.get(String.self, at: "required")) == "on"
        try await TwoFactorService(database: request.db, services: request.services).setRequired(required, grant: admin)
        return request.redirect(to: .settings, query: [("saved", "1")])
    }

    func resetTwoFactor(_ request: Request) async throws -> Response {
        let admin = try AdminGrant(try request.consoleUser(.admin), now: request.services.clock.now)
        guard let userID = request.parameters.get("userID", as: UUID.self),
            let user = try await UserRecord.find(userID, on: request.db)
        else { throw AppError.notFound }
        try await TwoFactorService(database: request.db, services: request.services).reset(user, grant: admin)
        return request.redirect(to: .users)
    }
}
