import Foundation
import Vapor

/// Every address of the console, in one place: controllers redirect to these, forms post to them, pages and
/// notifications link to them. `ConsoleURLTests` holds each one against the routes the router serves.
enum ConsoleURL: Hashable, Sendable {
    /// A staff member's first page, which depends on their role.
    case home

    // Account
    case login(next: String? = nil)
    case logout
    case password
    case preferences
    case twoFactor
    case disableTwoFactor

    // Administration
    case users
    case userActive(UUID)
    case userTwoFactorReset(UUID)
    case user(UUID)
    case userPassword(UUID)
    case userDeletion(UUID)
    case audit
    case settings
    case settingsTwoFactor
    case settingsACT
    case settingsName

    // Caseload
    case patients
    case patient(UUID)
    case assignPrompt(patient: UUID)
    case appointments(patient: UUID)
    case appointmentDecision(patient: UUID, appointment: UUID)
    case cancelAppointment(patient: UUID, appointment: UUID)
    case treatment(patient: UUID)
    case passwordReset(patient: UUID)
    case invitations
    case response(patient: UUID, response: UUID)
    case responseFHIR(patient: UUID, response: UUID)
    case healthRecord(patient: UUID)
    case thoughts(patient: UUID)
    case report(patient: UUID)
    case notes(patient: UUID)
    case deleteNote(patient: UUID, note: UUID)
    case pairingCodes
    case pairingCodeSheet
    case profile

    // Interventions and alerts
    case intersession(patient: UUID)
    case interventions(patient: UUID)
    case interventionTemplate(patient: UUID)
    case alerts
    case acknowledgement(alert: UUID)

    // Rules, templates and message plans
    case practiceRules
    case rules(study: UUID)
    case deleteRule(study: UUID, rule: UUID)
    case templates(study: UUID)
    case deleteTemplate(study: UUID, template: UUID)
    case messages(study: UUID)
    case deleteMessage(study: UUID, message: UUID)
    case messagePlan(study: UUID)

    // Instruments
    case instruments
    case instrumentEditor
    case instrument(key: String, version: Int)
    case publication(key: String, version: Int)
    case instrumentFHIR(key: String, version: Int)
    case pin(key: String, version: Int)

    // Plans and schedules
    case practicePlans
    case plans(study: UUID)
    case deletePlan(study: UUID, plan: UUID)
    case deactivatePlan(study: UUID, plan: UUID)
    case activatePlan(study: UUID, plan: UUID)
    case schedule(patient: UUID)

    // Studies
    case studies
    case newStudy
    case study(UUID)
    case editStudy(UUID)
    case enrollmentDecision(study: UUID, enrollment: UUID)
    case team(study: UUID)
    case teamMember(study: UUID, user: UUID)
    case removeTeamMember(study: UUID, user: UUID)
    case exports(study: UUID)
    case monitor(study: UUID)
    case monitorParticipant(study: UUID, patient: UUID)
    case consent(study: UUID)
    case practiceRecordSettings
    case recordSettings(study: UUID)
    case practiceArms
    case arms(study: UUID)
    case exportFile(study: UUID, export: UUID)
    case exportTokens(study: UUID)
    case revokeExportToken(study: UUID, token: UUID)

    /// The console's root, which every address lies under (and the console cookie's path).
    static let root = "/console"

    /// The path segments after `/console`.
    var segments: [String] {
        switch self {
        case .home: []
        case .login: ["login"]
        case .logout: ["logout"]
        case .password: ["password"]
        case .preferences: ["preferences"]
        case .twoFactor: ["two-factor"]
        case .disableTwoFactor: ["two-factor", "disable"]
        case .users: ["users"]
        case .userActive(let user): ["users", user.uuidString, "active"]
        case .userTwoFactorReset(let user): ["users", user.uuidString, "two-factor", "reset"]
        case .user(let user): ["users", user.uuidString]
        case .userPassword(let user): ["users", user.uuidString, "password"]
        case .userDeletion(let user): ["users", user.uuidString, "delete"]
        case .audit: ["audit"]
        case .settings: ["settings"]
        case .settingsTwoFactor: ["settings", "two-factor"]
        case .settingsACT: ["settings", "act"]
        case .settingsName: ["settings", "name"]
        case .patients: ["patients"]
        case .patient(let patient): ["patients", patient.uuidString]
        case .assignPrompt(let patient): ["patients", patient.uuidString, "prompts"]
        case .appointments(let patient): ["patients", patient.uuidString, "appointments"]
        case .appointmentDecision(let patient, let appointment):
            ["patients", patient.uuidString, "appointments", appointment.uuidString, "decision"]
        case .cancelAppointment(let patient, let appointment):
            ["patients", patient.uuidString, "appointments", appointment.uuidString, "cancel"]
        case .treatment(let patient): ["patients", patient.uuidString, "treatment"]
        case .passwordReset(let patient): ["patients", patient.uuidString, "password-reset"]
        case .invitations: ["invitations"]
        case .response(let patient, let response): ["patients", patient.uuidString, "responses", response.uuidString]
        case .responseFHIR(let patient, let response):
            ["patients", patient.uuidString, "responses", response.uuidString, "fhir"]
        case .healthRecord(let patient): ["patients", patient.uuidString, "record"]
        case .thoughts(let patient): ["patients", patient.uuidString, "thoughts"]
        case .report(let patient): ["patients", patient.uuidString, "report"]
        case .notes(let patient): ["patients", patient.uuidString, "notes"]
        case .deleteNote(let patient, let note): ["patients", patient.uuidString, "notes", note.uuidString, "delete"]
        case .pairingCodes: ["pairing-codes"]
        case .pairingCodeSheet: ["pairing-codes", "sheet"]
        case .profile: ["profile"]
        case .intersession(let patient): ["patients", patient.uuidString, "intersession"]
        case .interventions(let patient): ["patients", patient.uuidString, "interventions"]
        case .interventionTemplate(let patient): ["patients", patient.uuidString, "interventions", "template"]
        case .alerts: ["alerts"]
        case .acknowledgement(let alert): ["alerts", alert.uuidString, "acknowledgement"]
        case .practiceRules: ["rules"]
        case .rules(let study): ["studies", study.uuidString, "rules"]
        case .deleteRule(let study, let rule): ["studies", study.uuidString, "rules", rule.uuidString, "delete"]
        case .templates(let study): ["studies", study.uuidString, "templates"]
        case .deleteTemplate(let study, let template):
            ["studies", study.uuidString, "templates", template.uuidString, "delete"]
        case .messages(let study): ["studies", study.uuidString, "messages"]
        case .deleteMessage(let study, let message):
            ["studies", study.uuidString, "messages", message.uuidString, "delete"]
        case .messagePlan(let study): ["studies", study.uuidString, "message-plan"]
        case .instruments: ["instruments"]
        case .instrumentEditor: ["instruments", "editor"]
        case .instrument(let key, let version): ["instruments", key, String(version)]
        case .publication(let key, let version): ["instruments", key, String(version), "publication"]
        case .instrumentFHIR(let key, let version): ["instruments", key, String(version), "fhir"]
        case .pin(let key, let version): ["instruments", key, String(version), "pin"]
        case .practicePlans: ["plans"]
        case .plans(let study): ["studies", study.uuidString, "plans"]
        case .deletePlan(let study, let plan): ["studies", study.uuidString, "plans", plan.uuidString, "delete"]
        case .deactivatePlan(let study, let plan):
            ["studies", study.uuidString, "plans", plan.uuidString, "deactivate"]
        case .activatePlan(let study, let plan): ["studies", study.uuidString, "plans", plan.uuidString, "activate"]
        case .schedule(let patient): ["schedule", patient.uuidString]
        case .studies: ["studies"]
        case .newStudy: ["studies", "new"]
        case .study(let study): ["studies", study.uuidString]
        case .editStudy(let study): ["studies", study.uuidString, "edit"]
        case .enrollmentDecision(let study, let enrollment):
            ["studies", study.uuidString, "enrollments", enrollment.uuidString, "decision"]
        case .team(let study): ["studies", study.uuidString, "team"]
        case .teamMember(let study, let user): ["studies", study.uuidString, "team", user.uuidString]
        case .removeTeamMember(let study, let user): ["studies", study.uuidString, "team", user.uuidString, "delete"]
        case .exports(let study): ["studies", study.uuidString, "exports"]
        case .monitor(let study): ["studies", study.uuidString, "monitor"]
        case .monitorParticipant(let study, let patient): ["studies", study.uuidString, "monitor", patient.uuidString]
        case .consent(let study): ["studies", study.uuidString, "consent"]
        case .practiceRecordSettings: ["records"]
        case .recordSettings(let study): ["studies", study.uuidString, "records"]
        case .practiceArms: ["arms"]
        case .arms(let study): ["studies", study.uuidString, "arms"]
        case .exportFile(let study, let export): ["studies", study.uuidString, "exports", export.uuidString]
        case .exportTokens(let study): ["studies", study.uuidString, "exports", "tokens"]
        case .revokeExportToken(let study, let token):
            ["studies", study.uuidString, "exports", "tokens", token.uuidString, "delete"]
        }
    }

    /// The address, relative to the server, with any query the address itself carries.
    var path: String {
        let base = ([Self.root] + segments.map(Self.escape)).joined(separator: "/")
        if case .login(let next?) = self { return base + "?next=" + Self.escapeQueryValue(next) }
        return base
    }

    /// The address with query items and a fragment, for redirects that tell the page what just happened.
    func with(_ query: [(String, String)] = [], fragment: String? = nil) -> String {
        var address = path
        if !query.isEmpty {
            address +=
                (address.contains("?") ? "&" : "?")
                + query.map { "\(Self.escapeQueryValue($0.0))=\(Self.escapeQueryValue($0.1))" }.joined(separator: "&")
        }
        if let fragment { address += "#" + fragment }
        return address
    }

    private static func escape(_ segment: String) -> String {
        segment.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(["/"])) ?? segment
    }

    private static func escapeQueryValue(_ value: String) -> String {
        value.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
    }
}

extension Request {
    /// A redirect to a console address.
    func redirect(to url: ConsoleURL, query: [(String, String)] = [], fragment: String? = nil) -> Response {
        redirect(to: url.with(query, fragment: fragment))
    }
}
