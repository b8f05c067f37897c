import Fluent
import Foundation
import InterludeCore

/// The administrator's pages, built without a request: staff accounts, the audit log, the site's texts.
struct AdminPages: Sendable {
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
        var form: ConsoleAdminController.NewUserForm
        var errors: FormErrors
        /// The account whose row form was refused, and why.
        var rowErrors: FormErrors
        var rowUser: String?
    }

    /// A one-time password to hand over, shown once: for a new account or after a reset.
    struct CreatedUser: Encodable, Sendable {
        var email: String
        var oneTimePassword: String
        var reset = false
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
        var installationName: String
        var privacyVersion: String
        var privacyDe: String
        var privacyEn: String
        var imprintDe: String
        var imprintEn: String
        var twoFactorRequired: Bool
        var act: [ACTText]
        var saved: Bool
        var errors: FormErrors
    }

    /// One ACT process's page in each language, as the form shows it.
    struct ACTText: Encodable, Sendable {
        var process: String
        var label: String
        var de: String
        var en: String
    }

    let admin: UserRecord
    let database: any Database
    let services: AppServices

    private var localizer: Localizer { services.localizer }

    func users(
        created: CreatedUser?, form: ConsoleAdminController.NewUserForm, errors: FormErrors,
        rowErrors: FormErrors = FormErrors(),
        rowUser: UUID? = nil
    ) async throws -> UsersContent {
        let display = admin.dateDisplay
        let rows = try await StaffAccounts(database: database, services: services).list().map { user in
            UserRow(
                id: try user.requireID().uuidString, email: user.email, name: user.name,
                role: localizer.text("role.\(user.role.rawValue)", admin.language), active: user.deactivatedAt == nil,
                createdAt: display.dateTime(user.createdAt), isSelf: user.id == admin.id,
                twoFactor: user.totpSecret != nil)
        }
        return UsersContent(
            users: rows, created: created, form: form, errors: errors, rowErrors: rowErrors,
            rowUser: rowUser?.uuidString)
    }

    /// One page of the audit log, newest first; `actor`, `patient` (a pseudonym) and `before` as the query gave them.
    func audit(actor: String?, patient: String?, before: String?) async throws -> AuditContent {
        let display = admin.dateDisplay
        let actorFilter = actor.flatMap(UUID.init(uuidString:))
        let patientFilter = (patient ?? "")
            .trimmingCharacters(in: .whitespaces).uppercased()
        let before = before.flatMap(AuditReader.Cursor.init)
        let log = AuditReader(database: database)
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
                actor: actorFilter, patient: patientID, before: before, limit: ConsoleAdminController.auditPageSize)
        let staff = try await StaffAccounts(database: database, services: services).list(includingDeleted: true)
        let names = try await log.names(for: events)
        let rows = events.map { event in
            AuditRow(
                when: display.dateTime(event.occurredAt),
                actor: names.actors[event.actorID] ?? event.actorID.uuidString,
                action: localizer.text("audit.\(event.action)", admin.language),
                patient: event.subjectID.map { names.patients[$0] ?? localizer.text("audit.erased", admin.language) }
                    ?? "",
                target: event.target ?? "")
        }
        var olderLink: String?
        if events.count == ConsoleAdminController.auditPageSize, let last = events.last {
            var query = [("before", AuditReader.Cursor(last).text)]
            if let actorFilter { query.append(("actor", actorFilter.uuidString)) }
            if !patientFilter.isEmpty { query.append(("patient", patientFilter)) }
            olderLink = ConsoleURL.audit.with(query)
        }
        return AuditContent(
            events: rows,
            actors: try staff.map {
                .init(id: try $0.requireID().uuidString, email: $0.email, selected: $0.id == actorFilter)
            },
            patient: patientFilter, olderLink: olderLink, patientNotFound: patientNotFound)
    }

    func settings(
        form: ConsoleAdminController.SettingsForm?, act actForm: [String: String]? = nil,
        installationName: String? = nil,
        saved: Bool, errors: FormErrors
    ) async throws -> SettingsContent {
        let texts = SiteTexts(database: database)
        var act: [ACTText] = []
        for process in ACTProcess.allCases {
            func shown(_ language: Language) async throws -> String {
                if let entered = actForm?["\(process.rawValue)_\(language.rawValue)"] { return entered }
                return try await texts.text(process, language, localizer: localizer)
            }
            act.append(
                ACTText(
                    process: process.rawValue, label: localizer.text("act.process.\(process.rawValue)", admin.language),
                    de: try await shown(.de),
                    en: try await shown(.en)))
        }
        let current = try await ConsoleAdminController.SettingsForm(
            privacyVersion: texts.privacyPolicyVersion(),
            privacyDe: texts.text(.privacyPolicy, .de, localizer: localizer),
            privacyEn: texts.text(.privacyPolicy, .en, localizer: localizer),
            imprintDe: texts.text(.imprint, .de, localizer: localizer),
            imprintEn: texts.text(.imprint, .en, localizer: localizer))
        let shown = form ?? current
        let storedName = try await texts.installationName()
        let shownName = installationName ?? storedName ?? ""
        return SettingsContent(
            installationName: shownName,
            privacyVersion: shown.privacyVersion, privacyDe: shown.privacyDe, privacyEn: shown.privacyEn,
            imprintDe: shown.imprintDe, imprintEn: shown.imprintEn,
            twoFactorRequired: try await TwoFactorService(database: database, services: services).isRequired(),
            act: act, saved: saved, errors: errors)
    }
}
