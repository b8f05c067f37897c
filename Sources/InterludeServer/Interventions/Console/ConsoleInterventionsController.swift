import Fluent
import Foundation
import InterludeCore
import Vapor

/// The therapist's view between sessions: per patient a timeline of the Intersession-Daily, the interventions
/// with their status and a form to send one, the patient's alerts; and every staff member's alerts inbox.
struct ConsoleInterventionsController {
    struct SendForm: Content {
        var kind: String
        var text: String
    }

    struct TemplateForm: Content {
        var templateID: String
    }

    struct AcknowledgeForm: Content {
        var note: String?
        var back: String?
    }

    func register(on routes: any RoutesBuilder) {
        routes.get("patients", ":patientID", "intersession", use: intersession)
        routes.post("patients", ":patientID", "interventions", use: send)
        routes.post("patients", ":patientID", "interventions", "template", use: sendTemplate)
        routes.get("alerts", use: alerts)
        routes.post("alerts", ":alertID", "acknowledgement", use: acknowledge)
    }

    func intersession(_ request: Request) async throws -> Response {
        try await renderIntersession(request, sent: (try? request.query.get(String.self, at: "sent")) != nil)
    }

    private func renderIntersession(
        _ request: Request, form: SendForm? = nil, sent: Bool = false, errors: FormErrors = FormErrors(),
        status: HTTPResponseStatus = .ok
    ) async throws -> Response {
        let therapist = try request.consoleUser(.therapist)
        let chart = try await ConsoleTherapistController.chart(request, therapist)
        let content = try await pages(request, therapist).intersession(chart, form: form, sent: sent, errors: errors)
        return try await request.renderConsole(
            "console/intersession", titleKey: "console.intersession.title", content: content, status: status)
    }

    private func pages(_ request: Request, _ viewer: UserRecord) -> InterventionPages {
        InterventionPages(viewer: viewer, database: request.db, services: request.services)
    }

    func send(_ request: Request) async throws -> Response {
        let therapist = try request.consoleUser(.therapist)
        let chart = try await ConsoleTherapistController.chart(request, therapist)
        let form = try request.content.decode(SendForm.self)
        do {
            let draft = try InterventionDraft.validate(kindNamed: form.kind, text: form.text)
            _ = try await chart.sendIntervention(draft, id: nil)
            return request.redirect(
                to: .intersession(patient: chart.patientID), query: [("sent", "1")], fragment: "interventions")
        } catch {
            guard let errors = FormErrors.from(error, request: request) else { throw error }
            return try await renderIntersession(request, form: form, errors: errors, status: errors.status)
        }
    }

    func sendTemplate(_ request: Request) async throws -> Response {
        let therapist = try request.consoleUser(.therapist)
        let chart = try await ConsoleTherapistController.chart(request, therapist)
        let form = try request.content.decode(TemplateForm.self)
        guard let templateID = UUID(uuidString: form.templateID) else { throw AppError.notFound }
        _ = try await chart.sendTemplate(templateID)
        return request.redirect(
            to: .intersession(patient: chart.patientID), query: [("sent", "1")], fragment: "interventions")
    }

    func alerts(_ request: Request) async throws -> Response {
        try await renderAlerts(request, acknowledged: (try? request.query.get(String.self, at: "acknowledged")) != nil)
    }

    private func renderAlerts(
        _ request: Request, acknowledged: Bool = false, errors: FormErrors = FormErrors(), failedID: String = "",
        status: HTTPResponseStatus = .ok
    ) async throws -> Response {
        let staff = try request.consoleUser(.therapist, .researcher, .admin)
        let content = try await pages(request, staff).alerts(
            acknowledged: acknowledged, errors: errors, failedID: failedID)
        return try await request.renderConsole(
            "console/alerts", titleKey: "console.alerts.title", content: content, status: status)
    }

    func acknowledge(_ request: Request) async throws -> Response {
        let staff = try request.consoleUser(.therapist, .researcher, .admin)
        guard let alertID = request.parameters.get("alertID", as: UUID.self) else { throw AppError.notFound }
        let form = try request.content.decode(AcknowledgeForm.self)
        do {
            _ = try await AlertInbox(staff: staff, database: request.db, services: request.services)
                .acknowledge(alertID, note: form.note)
            return request.redirect(to: localPath(form.back, fallback: ConsoleURL.alerts.with([("acknowledged", "1")])))
        } catch {
            guard let errors = FormErrors.from(error, request: request) else { throw error }
            return try await renderAlerts(request, errors: errors, failedID: alertID.uuidString, status: errors.status)
        }
    }
}
