import Fluent
import Foundation
import InterludeCore

/// The therapist's caseload pages, built from what `Access/` lets the therapist see: the caseload, one patient's
/// page and one response. They need no request, so a test builds (and renders) them directly.
struct CaseloadPages: Sendable {
    struct PatientRow: Encodable, Sendable {
        var id: String
        var pseudonym: String
        var name: String
        var email: String
        var pairedSince: String
        var lastActivity: String
        var status: TreatmentStatus
        var statusLabel: String
        var compliance: ComplianceCell
        /// Alerts about the patient that wait for acknowledgement, in words: "1 high, 2 in all"; empty for none.
        var risk: String
        var high: Bool
        var openAlerts: Int
    }

    /// Prompts answered, missed and open so far, and the share answered.
    struct ComplianceCell: Encodable, Sendable {
        var completed: Int
        var expired: Int
        var open: Int
        var percent: String

        init(_ compliance: PromptService.Compliance) {
            completed = compliance.completed
            expired = compliance.expired
            open = compliance.open
            percent = compliance.percent.map { "\($0) %" } ?? "–"
        }
    }

    struct AppointmentRow: Encodable, Sendable {
        var id: String
        var version: Int
        var title: String
        var when: String
        var comment: String?
        var past: Bool
        /// A session the therapist's side booked, not over: theirs to cancel.
        var cancellable: Bool
        /// The patient's open request, in words, with their note.
        var request: String?
        var requestNote: String?
        var decisionPath: String
        var cancelPath: String
    }

    /// What the therapist just did with a session.
    enum AppointmentChange: String, Sendable {
        case granted, declined, cancelled
    }

    struct NotificationRow: Encodable, Sendable {
        var title: String
        var due: String
        var status: String
        var statusLabel: String
        var channel: String
        var receipt: String
    }

    struct PatientPlanRow: Encodable, Sendable {
        var title: String
        var summary: String
        var onlyForPatient: Bool
    }

    /// One page of a long history, newest first, with the addresses of the newer and the older page.
    struct HistoryPage<Row: Encodable & Sendable>: Encodable, Sendable {
        var rows: [Row]
        /// "Page 2 of 5"; empty when everything fits on one.
        var label: String
        var newer: String?
        var older: String?
    }

    /// How many rows of a history the patient's page shows at once.
    static let historyPageSize = 20
    /// How many open alerts the patient's page tells in full before pointing to the alerts page.
    static let alertsShown = 3
    /// How many notifications, the latest, the patient's page lists.
    static let notificationsShown = 20

    struct CaseloadContent: Encodable, Sendable {
        var patients: [PatientRow]
        var search: ConsoleTherapistController.CaseloadSearch
        /// Whether anything narrows the list, so that an empty one reads "nobody found" rather than "nobody yet".
        var filtered: Bool
        var statuses: [SelectOption]
        var sorts: [SelectOption]
        var ascending: Bool
        var nextLink: String?
        var errors: FormErrors
        var passwordChanged: Bool
    }

    struct PatientContent: Encodable, Sendable {
        var id: String
        var pseudonym: String
        var name: String?
        var dateOfBirth: String
        var gender: String
        var pairedSince: String
        var lastActivity: String
        var instruments: [SelectOption]
        var opensAt: String
        var closesAt: String
        var assigned: Bool
        var errors: FormErrors
        /// The first open alerts, the most urgent first; the rest are counted and linked.
        var openAlerts: [InterventionPages.AlertRow]
        var openAlertCount: Int
        /// "2 more in the alerts"; empty when all are shown.
        var moreAlerts: String
        var scores: [PatientSummary.ScoreRow]
        var complianceWindows: [PatientSummary.ComplianceWindow]
        var openPrompts: [PatientSummary.PromptLine]
        var missedPrompts: [PatientSummary.PromptLine]
        var nextSession: String
        var prompts: HistoryPage<PatientResults.PromptRow>
        var answers: HistoryPage<PatientResults.SubmissionRow>
        var upcoming: Int
        var compliance: ComplianceCell
        var practiceID: String
        var plans: [PatientPlanRow]
        var hasPlans: Bool
        var planAdded: Bool
        var appointments: [AppointmentRow]
        var hasAppointments: Bool
        var showPastAppointments: Bool
        var appointmentForm: ConsoleTherapistController.AppointmentForm
        var appointmentAdded: Bool
        /// What was just done with a session, in words.
        var appointmentChanged: String?
        var appointmentErrors: FormErrors
        var timeZone: String
        var reach: String
        var notifications: [NotificationRow]
        var hasNotifications: Bool
        var treatment: ConsoleTherapistController.TreatmentForm
        var treatmentStatus: TreatmentStatus
        var passwordResetSent: Bool
        var treatmentSaved: Bool
        var treatmentErrors: FormErrors
    }

    struct ResponseContent: Encodable, Sendable {
        var patientID: String
        var pseudonym: String
        var title: String
        var completedAt: String
        var receivedAt: String
        var scores: [PatientResults.ScoreCell]
        var answers: [PatientResults.AnswerRow]
        var fhirLink: String
        /// Where and in what noise it was answered, where the person let their therapist keep it.
        var context: [String]
    }

    /// What the patient page shows besides the patient: a form being corrected, what just happened, which
    /// appointments.
    struct PatientPageState: Sendable {
        var assignForm: ConsoleTherapistController.AssignForm?
        var assigned = false
        var assignErrors = FormErrors()
        var appointmentForm: ConsoleTherapistController.AppointmentForm?
        var appointmentAdded = false
        var appointmentChanged: AppointmentChange?
        var appointmentErrors = FormErrors()
        var showPastAppointments = false
        var planAdded = false
        var treatmentForm: ConsoleTherapistController.TreatmentForm?
        var treatmentSaved = false
        var treatmentErrors = FormErrors()
        var passwordResetSent = false
        /// The pages of the histories shown, from 1 (the newest).
        var promptsPage = 1
        var answersPage = 1

        /// The page numbers of the address, checked: whole numbers from 1.
        mutating func turn(promptsPage: Int?, answersPage: Int?) throws {
            for (field, page) in [("promptsPage", promptsPage), ("answersPage", answersPage)] {
                if let page, page < 1 || page > 1_000_000 { throw AppError.field(field, .invalidValue) }
            }
            self.promptsPage = promptsPage ?? 1
            self.answersPage = answersPage ?? 1
        }
    }

    let therapist: UserRecord
    let database: any Database
    let services: AppServices

    private var language: Language { therapist.language }
    private var localizer: Localizer { services.localizer }

    /// Open alerts by priority in words: "2 high-priority", "1 high-priority, 3 in all", "1 open".
    private func riskText(high: Int, all: Int) -> String {
        guard all > 0 else { return "" }
        if high == 0 { return localizer.text("console.patients.riskOpen", count: all, language) }
        let urgent = localizer.text("console.patients.riskHigh", count: high, language)
        return high == all
            ? urgent : localizer.text("console.patients.riskBoth", language, ["high": urgent, "all": String(all)])
    }

    /// One page of the caseload as the search asks; a search that cannot be read lists everyone, its problems
    /// beside the fields.
    func caseload(
        _ search: ConsoleTherapistController.CaseloadSearch = .init(), query: CaseloadQuery = CaseloadQuery(),
        page: PageRequest = .all, errors: FormErrors = FormErrors(), passwordChanged: Bool
    ) async throws -> CaseloadContent {
        let display = therapist.dateDisplay
        let caseload = try await CaseloadView.read(
            for: therapist, query: query, page: page, database: database, services: services)
        let rows = caseload.items.map { row in
            let entry = row.entry
            let status = entry.enrollment.treatmentStatus
            return PatientRow(
                id: entry.enrollment.$patient.id.uuidString, pseudonym: entry.profile.pseudonym,
                name: entry.enrollment.displayName ?? entry.patient.name ?? "", email: entry.patient.email,
                pairedSince: display.date(entry.enrollment.createdAt),
                lastActivity: display.dateTime(row.facts.lastActivityAt),
                status: status,
                statusLabel: localizer.text("treatmentStatus.\(status.rawValue)", language),
                compliance: ComplianceCell(row.compliance),
                risk: riskText(high: row.facts.highAlerts, all: row.facts.openAlerts), high: row.facts.highAlerts > 0,
                openAlerts: row.facts.openAlerts)
        }
        return CaseloadContent(
            patients: rows, search: search,
            filtered: query.words != nil || query.status != nil || query.from != nil || query.to != nil,
            statuses: TreatmentStatus.allCases.map {
                SelectOption(
                    value: $0.rawValue, label: localizer.text("treatmentStatus.\($0.rawValue)", language),
                    selected: query.status == $0)
            },
            sorts: CaseloadQuery.Sort.allCases.map {
                SelectOption(
                    value: $0.rawValue, label: localizer.text("console.patients.sort.\($0.rawValue)", language),
                    selected: query.sort == $0)
            },
            ascending: !query.descending,
            nextLink: caseload.next.map { nextPageLink(ConsoleURL.patients.path, cursor: $0, keeping: search.filters) },
            errors: errors, passwordChanged: passwordChanged)
    }

    /// One patient's chart: first what needs attention (open alerts, the latest scores, the share answered, what is
    /// open or missed, the next session), then sessions and plans, the histories a page at a time, and last the forms
    /// that manage the treatment.
    func patient(_ chart: PatientChart, _ state: PatientPageState) async throws -> PatientContent {
        let entry = try await chart.overview()
        let patientID = entry.patientID
        let now = services.clock.now
        let display = therapist.dateDisplay
        let catalog = InstrumentCatalog(database: database, services: services)
        let allPrompts = try await chart.prompts()
        let prompts = allPrompts.filter { $0.status != .scheduled }.sorted { $0.opensAt > $1.opensAt }
        let responses = try await chart.responses()
        let definitions = try await catalog.definitions(
            Set(
                prompts.map { InstrumentVersionKey(key: $0.record.instrumentKey, version: $0.record.instrumentVersion) }
                    + responses.map {
                        InstrumentVersionKey(key: $0.record.instrumentKey, version: $0.record.instrumentVersion)
                    }))
        let results = PatientResults(language: language, display: display, localizer: localizer)
        let summary = PatientSummary(language: language, display: display, localizer: localizer, now: now)
        let zone = TimeZone(identifier: therapist.timeZone) ?? .gmt
        let published = try await catalog.overview().filter(\.isPublished)
        var titles: [String: String] = [:]
        for record in published { titles[record.key] = record.title(in: language) }
        let instruments = published.map { record in
            SelectOption(
                value: record.key, label: titles[record.key] ?? record.key,
                selected: record.key == state.assignForm?.instrumentKey)
        }
        let promptTitle = { (prompt: PromptService.Current) in
            definitions[InstrumentVersionKey(key: prompt.instrumentKey, version: prompt.instrumentVersion)]?.title.text(
                self.language)
                ?? prompt.instrumentKey
        }
        let compliance = try await chart.compliance()
        let alerts = try await chart.alerts().filter { $0.record.acknowledgedAt == nil }
        let openAlerts = try await InterventionPages(viewer: therapist, database: database, services: services)
            .rows(of: Array(alerts.prefix(Self.alertsShown)))

        let summaries = PlanSummary(localizer: localizer, language: language)
        let plans = try await chart.plans()
            .map { item in
                PatientPlanRow(
                    title: titles[item.definition.instrumentKey] ?? item.definition.instrumentKey,
                    summary: summaries.describe(item.definition), onlyForPatient: item.plan.$patient.id == patientID)
            }

        let patientZone = entry.patient.zone
        let appointments = try await chart.appointments(includePast: state.showPastAppointments)
        let appointmentDisplay = DateDisplay(language: language, timeZone: patientZone)
        let span = { (start: Date, end: Date) in
            "\(appointmentDisplay.dateTime(start))–\(LocalDateTime(end, in: patientZone).time)"
        }
        let appointmentRows = appointments.map { shown in
            AppointmentRow(
                id: shown.id.uuidString, version: shown.version, title: shown.title,
                when: span(shown.startsAt, shown.endsAt),
                comment: shown.comment, past: shown.endsAt <= now,
                cancellable: shown.bookedByTherapist && shown.endsAt > now,
                request: shown.request.map { request in
                    switch (request.kind, request.startsAt, request.endsAt) {
                    case (.move, let start?, let end?):
                        localizer.text("console.appointment.asksMove", language, ["when": span(start, end)])
                    default: localizer.text("console.appointment.asksCancel", language)
                    }
                },
                requestNote: shown.request?.note,
                decisionPath: ConsoleURL.appointmentDecision(patient: patientID, appointment: shown.id).path,
                cancelPath: ConsoleURL.cancelAppointment(patient: patientID, appointment: shown.id).path)
        }
        let nextSession =
            appointments.filter { $0.startsAt > now }.min { $0.startsAt < $1.startsAt }
            .map { "\(appointmentDisplay.dayDateTime($0.startsAt)) · \($0.title)" } ?? ""
        let today = LocalDate(now, in: patientZone)
        let (reach, sent) = try await chart.notifications(limit: Self.notificationsShown)
        let reachText: String
        if reach.byPush {
            reachText = localizer.text("console.notifications.reachPush", count: reach.webPush + reach.apns, language)
        } else {
            reachText = localizer.text(
                reach.email ? "console.notifications.reachEmail" : "console.notifications.reachNone", language)
        }
        let notificationRows = sent.map { record in
            NotificationRow(
                title: record.title, due: display.dateTime(record.dueAt), status: record.status.rawValue,
                statusLabel: localizer.text("notificationStatus.\(record.status.rawValue)", language),
                channel: record.channel ?? "",
                receipt: record.receipt ?? "")
        }
        let path = ConsoleURL.patient(patientID).path
        func link(prompts: Int, answers: Int, anchor: String) -> String {
            var components = URLComponents()
            components.path = path
            components.queryItems =
                [("promptsPage", prompts), ("answersPage", answers)].filter { $0.1 > 1 }
                .map { URLQueryItem(name: $0.0, value: String($0.1)) }
                + (state.showPastAppointments ? [URLQueryItem(name: "pastAppointments", value: "1")] : [])
            if components.queryItems?.isEmpty == true { components.queryItems = nil }
            return (components.string ?? path) + "#" + anchor
        }
        let promptHistory = history(
            results.prompts(prompts, definitions: definitions), page: state.promptsPage,
            link: { link(prompts: $0, answers: state.answersPage, anchor: "prompts") }, row: { $0 })
        let answerHistory = history(
            responses.sorted { $0.record.completedAt > $1.record.completedAt }, page: state.answersPage,
            link: { link(prompts: state.promptsPage, answers: $0, anchor: "answers") },
            row: { results.submission($0, definitions: definitions) })
        return PatientContent(
            id: patientID.uuidString, pseudonym: entry.profile.pseudonym,
            name: entry.enrollment.displayName ?? entry.patient.name,
            dateOfBirth: entry.profile.dateOfBirth ?? "",
            gender: entry.profile.gender.map { localizer.text("gender.\($0)", language) } ?? "",
            pairedSince: display.date(entry.enrollment.createdAt),
            lastActivity: display.dateTime(try await chart.lastActivity()), instruments: instruments,
            opensAt: state.assignForm?.opensAt ?? LocalDateTime(now, in: zone).description,
            closesAt: state.assignForm?.closesAt
                ?? LocalDateTime(now.addingTimeInterval(7 * 24 * 3600), in: zone).description,
            assigned: state.assigned, errors: state.assignErrors,
            openAlerts: openAlerts, openAlertCount: alerts.count,
            moreAlerts: alerts.count > Self.alertsShown
                ? localizer.text("console.summary.moreAlerts", count: alerts.count - Self.alertsShown, language) : "",
            scores: summary.scores(responses, definitions: definitions, patientID: patientID),
            complianceWindows: summary.compliance(prompts), openPrompts: summary.open(prompts, titles: promptTitle),
            missedPrompts: summary.missed(prompts, titles: promptTitle), nextSession: nextSession,
            prompts: promptHistory, answers: answerHistory,
            upcoming: allPrompts.count - prompts.count,
            compliance: ComplianceCell(compliance),
            practiceID: entry.studyID.uuidString, plans: plans, hasPlans: !plans.isEmpty,
            planAdded: state.planAdded,
            appointments: appointmentRows, hasAppointments: !appointmentRows.isEmpty,
            showPastAppointments: state.showPastAppointments,
            appointmentForm: state.appointmentForm
                ?? .init(
                    id: UUID().uuidString, title: "", date: today.adding(days: 7).description, startTime: "",
                    endTime: ""),
            appointmentAdded: state.appointmentAdded,
            appointmentChanged: state.appointmentChanged.map {
                localizer.text("console.appointment.\($0.rawValue)", language)
            },
            appointmentErrors: state.appointmentErrors,
            timeZone: patientZone.identifier, reach: reachText, notifications: notificationRows,
            hasNotifications: !notificationRows.isEmpty,
            treatment: state.treatmentForm
                ?? .init(
                    displayName: entry.enrollment.displayName ?? "", therapyStart: entry.profile.therapyStart ?? "",
                    therapyEnd: entry.profile.therapyEnd ?? ""),
            treatmentStatus: entry.enrollment.treatmentStatus, passwordResetSent: state.passwordResetSent,
            treatmentSaved: state.treatmentSaved, treatmentErrors: state.treatmentErrors)
    }

    /// The rows of one page of a history already newest first; a page past the last shows the last.
    private func history<Item, Row: Encodable & Sendable>(
        _ all: [Item], page: Int, link: (Int) -> String, row: (Item) -> Row
    ) -> HistoryPage<Row> {
        let pages = max(1, (all.count + Self.historyPageSize - 1) / Self.historyPageSize)
        let shown = min(page, pages)
        let rows = all.dropFirst((shown - 1) * Self.historyPageSize).prefix(Self.historyPageSize).map(row)
        return HistoryPage(
            rows: rows,
            label: pages > 1
                ? localizer.text("console.patient.pageOf", language, ["page": String(shown), "pages": String(pages)])
                : "",
            newer: shown > 1 ? link(shown - 1) : nil, older: shown < pages ? link(shown + 1) : nil)
    }

    /// One response's answers in the instrument's order, with its scores.
    func response(_ chart: PatientChart, _ stored: ResponseService.Stored, definition: InstrumentDefinition) throws
        -> ResponseContent
    {
        let display = therapist.dateDisplay
        let results = PatientResults(language: language, display: display, localizer: localizer)
        return ResponseContent(
            patientID: chart.patientID.uuidString, pseudonym: chart.profile.pseudonym,
            title: definition.title.text(language), completedAt: display.dateTime(stored.record.completedAt),
            receivedAt: display.dateTime(stored.record.receivedAt),
            scores: results.sections(
                [stored],
                definitions: [
                    InstrumentVersionKey(key: definition.key, version: definition.version): definition
                ]
            ).first?.submissions.first?.scores ?? [],
            answers: results.answers(stored, definition: definition),
            fhirLink: ConsoleURL.responseFHIR(patient: chart.patientID, response: try stored.record.requireID()).path,
            context: contextLines(
                try ResponseService(database: database, services: services).context(of: stored.record), display))
    }

    /// The position and the noise level kept with an answer, in words.
    private func contextLines(_ context: AnswerContext?, _ display: DateDisplay) -> [String] {
        guard let context else { return [] }
        var lines: [String] = []
        if let location = context.location {
            lines.append(
                localizer.text(
                    "console.response.location", language,
                    [
                        "latitude": String(format: "%.5f", location.latitude),
                        "longitude": String(format: "%.5f", location.longitude),
                        "accuracy": location.accuracyM.plainText(), "time": display.dateTime(location.capturedAt),
                    ]))
        }
        if let noise = context.noise {
            lines.append(
                localizer.text(
                    "console.response.noise", language,
                    [
                        "dbfs": String(format: "%.1f", noise.dbfs), "seconds": noise.durationS.plainText(),
                        "time": display.dateTime(noise.capturedAt),
                    ]))
        }
        return lines
    }
}
