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
        var title: String
        var when: String
        var comment: String?
        var past: Bool
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
        var prompts: [PatientResults.PromptRow]
        var hasPrompts: Bool
        var results: [PatientResults.InstrumentSection]
        var hasResults: Bool
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
        var appointmentErrors = FormErrors()
        var showPastAppointments = false
        var planAdded = false
        var treatmentForm: ConsoleTherapistController.TreatmentForm?
        var treatmentSaved = false
        var treatmentErrors = FormErrors()
        var passwordResetSent = false
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
        return high == all ? urgent : localizer.text("console.patients.riskBoth", language, ["high": urgent, "all": String(all)])
    }

    /// One page of the caseload as the search asks; a search that cannot be read lists everyone, its problems
    /// beside the fields.
    func caseload(
        _ search: ConsoleTherapistController.CaseloadSearch = .init(), query: CaseloadQuery = CaseloadQuery(),
        page: PageRequest = .all, errors: FormErrors = FormErrors(), passwordChanged: Bool
    ) async throws -> CaseloadContent {
        let display = therapist.dateDisplay
        let caseload = try await CaseloadView.read(for: therapist, query: query, page: page, database: database, services: services)
        let rows = caseload.items.map { row in
            let entry = row.entry
            let status = entry.enrollment.treatmentStatus
            return PatientRow(
                id: entry.enrollment.$patient.id.uuidString, pseudonym: entry.profile.pseudonym,
                name: entry.enrollment.displayName ?? entry.patient.name ?? "", email: entry.patient.email,
                pairedSince: display.date(entry.enrollment.createdAt), lastActivity: display.dateTime(row.facts.lastActivityAt),
                status: status,
                statusLabel: localizer.text("treatmentStatus.\(status.rawValue)", language), compliance: ComplianceCell(row.compliance),
                risk: riskText(high: row.facts.highAlerts, all: row.facts.openAlerts), high: row.facts.highAlerts > 0,
                openAlerts: row.facts.openAlerts)
        }
        return CaseloadContent(
            patients: rows, search: search, filtered: query.words != nil || query.status != nil || query.from != nil || query.to != nil,
            statuses: TreatmentStatus.allCases.map {
                SelectOption(value: $0.rawValue, label: localizer.text("treatmentStatus.\($0.rawValue)", language), selected: query.status == $0)
            },
            sorts: CaseloadQuery.Sort.allCases.map {
                SelectOption(value: $0.rawValue, label: localizer.text("console.patients.sort.\($0.rawValue)", language), selected: query.sort == $0)
            },
            ascending: !query.descending,
            nextLink: caseload.next.map { nextPageLink(ConsoleURL.patients.path, cursor: $0, keeping: search.filters) },
            errors: errors, passwordChanged: passwordChanged)
    }

    func patient(_ chart: PatientChart, _ state: PatientPageState) async throws -> PatientContent {
        let entry = try await chart.overview()
        let patientID = entry.patientID
        let now = services.clock.now
        let display = therapist.dateDisplay
        let catalog = InstrumentCatalog(database: database, services: services)
        let allPrompts = try await chart.prompts()
        let prompts = allPrompts.filter { $0.status != .scheduled }
        let responses = try await chart.responses()
        let definitions = try await catalog.definitions(
            Set(prompts.map { InstrumentVersionKey(key: $0.record.instrumentKey, version: $0.record.instrumentVersion) }
                + responses.map { InstrumentVersionKey(key: $0.record.instrumentKey, version: $0.record.instrumentVersion) }))
        let results = PatientResults(language: language, display: display, localizer: localizer)
        let zone = TimeZone(identifier: therapist.timeZone) ?? .gmt
        let published = try await catalog.overview().filter(\.isPublished)
        var titles: [String: String] = [:]
        for record in published { titles[record.key] = record.title(in: language) }
        let instruments = published.map { record in
            SelectOption(
                value: record.key, label: titles[record.key] ?? record.key, selected: record.key == state.assignForm?.instrumentKey)
        }
        let promptRows = results.prompts(prompts, definitions: definitions)
        let sections = results.sections(responses, definitions: definitions)
        let compliance = try await chart.compliance()

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
        let appointmentRows = appointments.map { shown in
            let end = LocalDateTime(shown.endsAt, in: patientZone).time
            return AppointmentRow(
                title: shown.title, when: "\(appointmentDisplay.dateTime(shown.startsAt))–\(end)",
                comment: shown.comment, past: shown.endsAt <= now)
        }
        let today = LocalDate(now, in: patientZone)
        let (reach, sent) = try await chart.notifications(limit: 20)
        let reachText: String
        if reach.byPush {
            reachText = localizer.text("console.notifications.reachPush", language, ["count": String(reach.webPush + reach.apns)])
        } else {
            reachText = localizer.text(reach.email ? "console.notifications.reachEmail" : "console.notifications.reachNone", language)
        }
        let notificationRows = sent.map { record in
            NotificationRow(
                title: record.title, due: display.dateTime(record.dueAt), status: record.status.rawValue,
                statusLabel: localizer.text("notificationStatus.\(record.status.rawValue)", language), channel: record.channel ?? "",
                receipt: record.receipt ?? "")
        }
        return PatientContent(
            id: patientID.uuidString, pseudonym: entry.profile.pseudonym, name: entry.enrollment.displayName ?? entry.patient.name,
            dateOfBirth: entry.profile.dateOfBirth ?? "",
            gender: entry.profile.gender.map { localizer.text("gender.\($0)", language) } ?? "",
            pairedSince: display.date(entry.enrollment.createdAt),
            lastActivity: display.dateTime(entry.patient.lastActiveAt), instruments: instruments,
            opensAt: state.assignForm?.opensAt ?? LocalDateTime(now, in: zone).description,
            closesAt: state.assignForm?.closesAt ?? LocalDateTime(now.addingTimeInterval(7 * 24 * 3600), in: zone).description,
            assigned: state.assigned, errors: state.assignErrors, prompts: promptRows, hasPrompts: !promptRows.isEmpty,
            results: sections, hasResults: !sections.isEmpty,
            upcoming: allPrompts.count - prompts.count,
            compliance: ComplianceCell(compliance),
            practiceID: entry.studyID.uuidString, plans: plans, hasPlans: !plans.isEmpty,
            planAdded: state.planAdded,
            appointments: appointmentRows, hasAppointments: !appointmentRows.isEmpty,
            showPastAppointments: state.showPastAppointments,
            appointmentForm: state.appointmentForm
                ?? .init(id: UUID().uuidString, title: "", date: today.adding(days: 7).description, startTime: "", endTime: ""),
            appointmentAdded: state.appointmentAdded, appointmentErrors: state.appointmentErrors,
            timeZone: patientZone.identifier, reach: reachText, notifications: notificationRows,
            hasNotifications: !notificationRows.isEmpty,
            treatment: state.treatmentForm
                ?? .init(
                    displayName: entry.enrollment.displayName ?? "", therapyStart: entry.profile.therapyStart ?? "",
                    therapyEnd: entry.profile.therapyEnd ?? ""),
            treatmentStatus: entry.enrollment.treatmentStatus, passwordResetSent: state.passwordResetSent,
            treatmentSaved: state.treatmentSaved, treatmentErrors: state.treatmentErrors)
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
            scores: results.sections([stored], definitions: [
                InstrumentVersionKey(key: definition.key, version: definition.version): definition
            ]).first?.submissions.first?.scores ?? [],
            answers: results.answers(stored, definition: definition),
            fhirLink: ConsoleURL.responseFHIR(patient: chart.patientID, response: try stored.record.requireID()).path,
            context: contextLines(try ResponseService(database: database, services: services).context(of: stored.record), display))
    }

    /// The position and the noise level kept with an answer, in words.
    private func contextLines(_ context: AnswerContext?, _ display: DateDisplay) -> [String] {
        guard let context else { return [] }
        var lines: [String] = []
        if let location = context.location {
            lines.append(localizer.text("console.response.location", language, [
                "latitude": String(format: "%.5f", location.latitude), "longitude": String(format: "%.5f", location.longitude),
                "accuracy": location.accuracyM.plainText(), "time": display.dateTime(location.capturedAt),
            ]))
        }
        if let noise = context.noise {
            lines.append(localizer.text("console.response.noise", language, [
                "dbfs": String(format: "%.1f", noise.dbfs), "seconds": noise.durationS.plainText(), "time": display.dateTime(noise.capturedAt),
            ]))
        }
        return lines
    }
}
