import Fluent
import Foundation
import InterludeCore
import Vapor

/// The therapist's view between sessions: per patient a timeline of the Intersession-Daily, the interventions
/// with their status and a form to send one, the patient's alerts; and every staff member's alerts inbox.
struct ConsoleInterventionsController {
    struct InterventionRow: Encodable, Sendable {
        var kind: String
        var text: String
        var origin: String
        var state: String
        var stateLabel: String
        var sentAt: String
        var seenAt: String
        var completedAt: String
    }

    struct AlertRow: Encodable, Sendable {
        var id: String
        var patientID: String
        var patientCode: String
        var high: Bool
        var priorityLabel: String
        var reason: String
        var createdAt: String
        var open: Bool
        var acknowledgedAt: String
        var note: String
        var escalated: Bool
        var escalatedAt: String
        var canOpenPatient: Bool
    }

    struct DayRow: Encodable, Sendable {
        var date: String
        var answered: Int
        var thought: Int
        var meanFeeling: String
    }

    struct Chart: Encodable, Sendable {
        var title: String
        var svg: String
    }

    struct SendForm: Content {
        var kind: String
        var text: String
    }

    struct TemplateForm: Content {
        var templateID: String
    }

    struct IntersessionContent: Encodable, Sendable {
        var id: String
        var pseudonym: String
        var lastActivity: String
        var compliance: CaseloadPages.ComplianceCell
        var charts: [Chart]
        var days: [DayRow]
        var hasDays: Bool
        var interventions: [InterventionRow]
        var hasInterventions: Bool
        var kinds: [SelectOption]
        var templates: [SelectOption]
        var hasTemplates: Bool
        var form: SendForm
        var sent: Bool
        var errors: FormErrors
        var alerts: [AlertRow]
        var hasAlerts: Bool
    }

    struct AlertsContent: Encodable, Sendable {
        var alerts: [AlertRow]
        var hasAlerts: Bool
        var acknowledged: Bool
        var errors: FormErrors
        var failedID: String
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

    /// How many days the timeline shows.
    static let timelineDays = 28

    func intersession(_ request: Request) async throws -> Response {
        try await renderIntersession(request, sent: (try? request.query.get(String.self, at: "sent")) != nil)
    }

    private func renderIntersession(
        _ request: Request, form: SendForm? = nil, sent: Bool = false, errors: FormErrors = FormErrors(),
        status: HTTPResponseStatus = .ok
    ) async throws -> Response {
        let therapist = try request.consoleUser(.therapist)
        let chart = try await ConsoleTherapistController.chart(request, therapist)
        let patientID = chart.patientID
        let services = request.services
        let now = services.clock.now
        let display = therapist.dateDisplay
        let language = therapist.language
        let localizer = services.localizer

        let since = now.addingTimeInterval(-Double(Self.timelineDays) * 86_400)
        let dailies = try await chart.responses(instrumentKey: IntersessionDay.instrumentKey, since: since)
        let zone = chart.patient.zone
        let days = IntersessionDay.days(
            dailies.compactMap { IntersessionDay.Entry(completedAt: $0.record.completedAt, answers: $0.answers) }, in: zone)
        let noon = { (day: IntersessionDay) in LocalDateTime(date: day.date, time: LocalTime(hour: 12, minute: 0)!).instant(in: zone) }
        var charts: [Chart] = []
        if !days.isEmpty {
            let thoughtTitle = localizer.text("console.intersession.thoughtChart", language)
            charts.append(
                Chart(
                    title: thoughtTitle,
                    svg: ScoreChart(
                        title: thoughtTitle, points: days.map { .init(date: noon($0), value: ($0.thoughtShare * 100).rounded()) },
                        bands: [], range: 0...100, resolution: 1, display: display, language: language, id: "chart-thought"
                    ).svg))
            let feelingDays = days.filter { $0.meanFeeling != nil }
            if !feelingDays.isEmpty {
                let feelingTitle = localizer.text("console.intersession.feelingChart", language)
                charts.append(
                    Chart(
                        title: feelingTitle,
                        svg: ScoreChart(
                            title: feelingTitle, points: feelingDays.map { .init(date: noon($0), value: $0.meanFeeling!) },
                            bands: [], range: 1...5, resolution: 1, display: display, language: language, id: "chart-feeling"
                        ).svg))
            }
        }
        let compliance = try await chart.compliance()
        let interventions = try await chart.interventions()
        let templates = try await chart.templates()
        let alerts = try await chart.alerts()
        let shown = form ?? SendForm(kind: InterventionKind.commendation.rawValue, text: "")
        let content = IntersessionContent(
            id: patientID.uuidString, pseudonym: chart.profile.pseudonym, lastActivity: display.dateTime(chart.patient.lastActiveAt),
            compliance: .init(compliance), charts: charts,
            days: days.reversed().map {
                DayRow(
                    date: display.date(noon($0)), answered: $0.answered, thought: $0.thought,
                    meanFeeling: $0.meanFeeling.map { (($0 * 10).rounded() / 10).plainText() } ?? "–")
            },
            hasDays: !days.isEmpty, interventions: interventions.map { row($0, display: display, localizer: localizer, language: language) },
            hasInterventions: !interventions.isEmpty,
            kinds: InterventionKind.written.map {
                SelectOption(value: $0.rawValue, label: localizer.text("intervention.kind.\($0.rawValue)", language), selected: $0.rawValue == shown.kind)
            },
            templates: templates.map {
                SelectOption(
                    value: $0.id?.uuidString ?? "",
                    label: "\(localizer.text("intervention.kind.\($0.kind.rawValue)", language)): \($0.text)", selected: false)
            },
            hasTemplates: !templates.isEmpty, form: shown, sent: sent, errors: errors,
            alerts: alerts.map {
                Self.alertRow(
                    AlertInbox.Shown(opened: $0, detailed: true, ownPatient: true), for: therapist, display: display,
                    localizer: localizer, language: language)
            },
            hasAlerts: !alerts.isEmpty)
        return try await request.renderConsole(
            "console/intersession", titleKey: "console.intersession.title", content: content, status: status)
    }

    private func row(
        _ opened: InterventionService.Opened, display: DateDisplay, localizer: Localizer, language: Language
    ) -> InterventionRow {
        InterventionRow(
            kind: localizer.text("intervention.kind.\(opened.kind.rawValue)", language), text: opened.text,
            origin: localizer.text("intervention.origin.\(opened.record.origin.rawValue)", language), state: opened.state.rawValue,
            stateLabel: localizer.text("intervention.state.\(opened.state.rawValue)", language),
            sentAt: display.dateTime(opened.record.deliverAt), seenAt: display.dateTime(opened.record.seenAt),
            completedAt: display.dateTime(opened.record.completedAt))
    }

    static func alertRow(
        _ shown: AlertInbox.Shown, for staff: UserRecord, display: DateDisplay, localizer: Localizer, language: Language
    ) -> AlertRow {
        let opened = shown.opened
        let record = opened.record
        return AlertRow(
            id: record.id?.uuidString ?? "", patientID: record.$patient.id.uuidString, patientCode: opened.patientCode ?? "",
            high: opened.record.priority == .high, priorityLabel: localizer.text("alert.priority.\(opened.record.priority.rawValue)", language),
            reason: opened.reason, createdAt: display.dateTime(record.createdAt), open: record.acknowledgedAt == nil,
            acknowledgedAt: display.dateTime(record.acknowledgedAt), note: opened.note ?? "",
            escalated: record.$escalatedTo.id != nil && record.$escalatedTo.id == staff.id,
            escalatedAt: display.dateTime(record.escalatedAt), canOpenPatient: shown.ownPatient)
    }

    func send(_ request: Request) async throws -> Response {
        let therapist = try request.consoleUser(.therapist)
        let chart = try await ConsoleTherapistController.chart(request, therapist)
        let form = try request.content.decode(SendForm.self)
        do {
            let draft = try InterventionDraft.validate(kindNamed: form.kind, text: form.text)
            _ = try await chart.sendIntervention(draft, id: nil)
            return request.redirect(to: .intersession(patient: chart.patientID), query: [("sent", "1")], fragment: "interventions")
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
        return request.redirect(to: .intersession(patient: chart.patientID), query: [("sent", "1")], fragment: "interventions")
    }

    func alerts(_ request: Request) async throws -> Response {
        try await renderAlerts(request, acknowledged: (try? request.query.get(String.self, at: "acknowledged")) != nil)
    }

    private func renderAlerts(
        _ request: Request, acknowledged: Bool = false, errors: FormErrors = FormErrors(), failedID: String = "",
        status: HTTPResponseStatus = .ok
    ) async throws -> Response {
        let staff = try request.consoleUser(.therapist, .researcher, .admin)
        let services = request.services
        let alerts = try await AlertInbox(staff: staff, database: request.db, services: services).alerts()
        let display = staff.dateDisplay
        let rows = alerts.map {
            Self.alertRow($0, for: staff, display: display, localizer: services.localizer, language: staff.language)
        }
        return try await request.renderConsole(
            "console/alerts", titleKey: "console.alerts.title",
            content: AlertsContent(
                alerts: rows, hasAlerts: !rows.isEmpty, acknowledged: acknowledged, errors: errors, failedID: failedID),
            status: status)
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
