import Fluent
import Foundation
import InterludeCore

/// The pages between sessions, built without a request: one patient's timeline, interventions and alerts for
/// their therapist, and every staff member's alerts inbox.
struct InterventionPages: Sendable {
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
        var patientName: String
        var high: Bool
        var priorityLabel: String
        /// The rule's message and what happened in words; the stored reason when it cannot be told.
        var reason: String
        var facts: [String]
        var link: String
        var linkLabel: String
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
        /// The patient is in a control arm: nothing may be sent, and the page says so instead of offering it.
        var controlArm: Bool
        var form: ConsoleInterventionsController.SendForm
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

    /// How many days the timeline shows.
    static let timelineDays = 28

    let viewer: UserRecord
    let database: any Database
    let services: AppServices

    private var language: Language { viewer.language }
    private var localizer: Localizer { services.localizer }

    func intersession(
        _ chart: PatientChart, form: ConsoleInterventionsController.SendForm?, sent: Bool, errors: FormErrors
    ) async throws -> IntersessionContent {
        let patientID = chart.patientID
        let now = services.clock.now
        let display = viewer.dateDisplay

        let since = now.addingTimeInterval(-Double(Self.timelineDays) * 86_400)
        let dailies = try await chart.responses(instrumentKey: IntersessionDay.instrumentKey, since: since)
        let zone = chart.patient.zone
        let days = IntersessionDay.days(
            dailies.compactMap { IntersessionDay.Entry(completedAt: $0.record.completedAt, answers: $0.answers) },
            in: zone)
        let noon = { (day: IntersessionDay) in
            LocalDateTime(date: day.date, time: LocalTime(hour: 12, minute: 0)!).instant(in: zone)
        }
        var charts: [Chart] = []
        if !days.isEmpty {
            let thoughtTitle = localizer.text("console.intersession.thoughtChart", language)
            charts.append(
                Chart(
                    title: thoughtTitle,
                    svg: ScoreChart(
                        title: thoughtTitle,
                        points: days.map { .init(date: noon($0), value: ($0.thoughtShare * 100).rounded()) },
                        bands: [], range: 0...100, resolution: 1, display: display, language: language,
                        id: "chart-thought"
                    ).svg))
            let feelingDays = days.filter { $0.meanFeeling != nil }
            if !feelingDays.isEmpty {
                let feelingTitle = localizer.text("console.intersession.feelingChart", language)
                charts.append(
                    Chart(
                        title: feelingTitle,
                        svg: ScoreChart(
                            title: feelingTitle,
                            points: feelingDays.map { .init(date: noon($0), value: $0.meanFeeling!) },
                            bands: [], range: 1...5, resolution: 1, display: display, language: language,
                            id: "chart-feeling"
                        ).svg))
            }
        }
        let compliance = try await chart.compliance()
        let interventions = try await chart.interventions()
        let templates = try await chart.templates()
        let alerts = try await chart.alerts()
        let shown =
            form ?? ConsoleInterventionsController.SendForm(kind: InterventionKind.commendation.rawValue, text: "")
        return IntersessionContent(
            id: patientID.uuidString, pseudonym: chart.profile.pseudonym,
            lastActivity: display.dateTime(try await chart.lastActivity()),
            compliance: .init(compliance), charts: charts,
            days: days.reversed().map {
                DayRow(
                    date: display.date(noon($0)), answered: $0.answered, thought: $0.thought,
                    meanFeeling: $0.meanFeeling.map { (($0 * 10).rounded() / 10).plainText() } ?? "–")
            },
            hasDays: !days.isEmpty, interventions: interventions.map { row($0, display: display) },
            hasInterventions: !interventions.isEmpty,
            kinds: InterventionKind.written.map {
                SelectOption(
                    value: $0.rawValue, label: localizer.text("intervention.kind.\($0.rawValue)", language),
                    selected: $0.rawValue == shown.kind)
            },
            templates: templates.map {
                SelectOption(
                    value: $0.id?.uuidString ?? "",
                    label:
                        "\(localizer.text("intervention.kind.\($0.kind.rawValue)", language)): \($0.texts.text(chart.patient.language))",
                    selected: false)
            },
            hasTemplates: !templates.isEmpty, controlArm: try await chart.inControlArm(), form: shown, sent: sent,
            errors: errors,
            alerts: try await rows(of: alerts), hasAlerts: !alerts.isEmpty)
    }

    /// The alerts about one patient of the viewer's, told in words, as their chart shows them.
    func rows(of alerts: [AlertService.Opened]) async throws -> [AlertRow] {
        try await AlertInbox.told(
            alerts.map { AlertInbox.Shown(opened: $0, detailed: true, ownPatient: true) }, viewer: viewer,
            database: database,
            services: services
        ).map { alertRow($0, display: viewer.dateDisplay) }
    }

    func alerts(acknowledged: Bool, errors: FormErrors, failedID: String) async throws -> AlertsContent {
        let alerts = try await AlertInbox(staff: viewer, database: database, services: services).alerts()
        let display = viewer.dateDisplay
        let rows = alerts.map {
            alertRow($0, display: display)
        }
        return AlertsContent(
            alerts: rows, hasAlerts: !rows.isEmpty, acknowledged: acknowledged, errors: errors, failedID: failedID)
    }

    private func row(
        _ opened: InterventionService.Opened, display: DateDisplay
    ) -> InterventionRow {
        InterventionRow(
            kind: localizer.text("intervention.kind.\(opened.kind.rawValue)", language), text: opened.text,
            origin: localizer.text("intervention.origin.\(opened.origin.rawValue)", language),
            state: opened.state.rawValue,
            stateLabel: localizer.text("intervention.state.\(opened.state.rawValue)", language),
            sentAt: display.dateTime(opened.deliverAt), seenAt: display.dateTime(opened.seenAt),
            completedAt: display.dateTime(opened.completedAt))
    }

    private func alertRow(
        _ shown: AlertInbox.Shown, display: DateDisplay
    ) -> AlertRow {
        let opened = shown.opened
        let record = opened.record
        let told = shown.told
        return AlertRow(
            id: record.id?.uuidString ?? "", patientID: record.$patient.id.uuidString,
            patientCode: opened.patientCode ?? "",
            patientName: shown.patientName ?? "",
            high: opened.record.priority == .high,
            priorityLabel: localizer.text("alert.priority.\(opened.record.priority.rawValue)", language),
            reason: told?.message ?? opened.reason, facts: told?.facts ?? [], link: told?.link ?? "",
            linkLabel: told.map { localizer.text($0.linkLabelKey, language) } ?? "",
            createdAt: display.dateTime(record.createdAt), open: record.acknowledgedAt == nil,
            acknowledgedAt: display.dateTime(record.acknowledgedAt), note: opened.note ?? "",
            escalated: record.$escalatedTo.id != nil && record.$escalatedTo.id == viewer.id,
            escalatedAt: display.dateTime(record.escalatedAt), canOpenPatient: shown.ownPatient)
    }
}
