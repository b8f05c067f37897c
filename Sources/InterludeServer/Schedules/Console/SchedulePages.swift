import Fluent
import Foundation
import InterludeCore

/// The plan pages, built without a request: a study's plans with the plan form and its preview, and one
/// participant's prompts for any period in their local time.
struct SchedulePages: Sendable {
    struct PlanRow: Encodable, Sendable {
        var id: String
        var title: String
        var summary: String
        var target: String
        var createdAt: String
        /// Whether its questionnaire is deactivated.
        var inactive: Bool
    }

    struct WeekdayRow: Encodable, Sendable {
        var value: String
        var label: String
        var checked: Bool
        var windowsField: String
        /// The day's windows as rows of the form, with empty ones to add more.
        var windows: [WindowRowView]
        var windowsError: String?
    }

    struct WindowRowView: Encodable, Sendable {
        var index: Int
        var from: String
        var until: String
        var count: String
    }

    /// Rows a weekday offers at least, and empty ones after those filled in.
    static let windowRows = 3

    struct PlansContent: Encodable, Sendable {
        var studyID: String
        var studyTitle: String
        var isPractice: Bool
        var plans: [PlanRow]
        var hasPlans: Bool
        var form: PlanForm
        var kinds: [SelectOption]
        var instruments: [SelectOption]
        var targets: [SelectOption]
        var weekdays: [WeekdayRow]
        var weekdayOptions: [SelectOption]
        /// "the 1st" to "the 28th", and "the last day".
        var monthDays: [SelectOption]
        var units: UnitChoices
        var anchors: [SelectOption]
        var previewPatients: [SelectOption]
        var previewFrom: String
        var previewDays: String
        var preview: PreviewTable?
        var errors: FormErrors
        /// What the last action did, for the notice at the top.
        var done: PlanChange?
    }

    /// The units each span of time may be written in, the form's choice selected.
    struct UnitChoices: Encodable, Sendable {
        var duration: [SelectOption]
        var reminders: [SelectOption]
        var opensBefore: [SelectOption]
        var closesAfterStart: [SelectOption]
    }

    enum PlanChange: String, Encodable, Sendable {
        case created, removed, deactivated, activated
    }

    struct PatientScheduleContent: Encodable, Sendable {
        var patientID: String
        var pseudonym: String
        var backLink: String
        var from: String
        var days: String
        var preview: PreviewTable
        var errors: FormErrors
    }

    let viewer: UserRecord
    let database: any Database
    let services: AppServices

    private var language: Language { viewer.language }
    private var localizer: Localizer { services.localizer }

    func plans(
        _ grant: StudyGrant, form: PlanForm, submission: ConsoleScheduleController.PlanSubmission,
        preview draft: SchedulePlan?,
        errors: FormErrors, done: PlanChange?
    ) async throws -> PlansContent {
        let studyID = grant.studyID
        let schedules = ScheduleService(database: database, services: services)
        let study = grant.study
        let now = services.clock.now
        let catalog = InstrumentCatalog(database: database, services: services)
        let published = try await catalog.overview().filter { $0.isPublished && $0.isUsable(in: studyID) }
        var titles: [String: String] = [:]
        for record in published { titles[record.key] = record.title(in: language) }

        let participants = try await StudyService(database: database, services: services).participants(of: grant)
            .filter { $0.enrollment.status == EnrollmentStatus.active }.sorted { $0.label < $1.label }
        let pseudonyms = Dictionary(
            participants.map { ($0.enrollment.$patient.id, $0.label) }, uniquingKeysWith: { first, _ in first })
        let summaries = PlanSummary(localizer: localizer, language: language)
        let display = viewer.dateDisplay
        let rows = try await schedules.plans(in: grant).map { record in
            let plan = try JSONDecoder().decode(SchedulePlan.self, from: Data(record.definition.utf8))
            let target: String
            if let patient = record.$patient.id {
                target = pseudonyms[patient] ?? localizer.text("console.plans.targetGone", language)
            } else if let arm = record.arm {
                target = localizer.text("console.plans.targetArm", language, ["arm": arm])
            } else {
                target = localizer.text("console.plans.targetAll", language)
            }
            return PlanRow(
                id: try record.requireID().uuidString, title: titles[record.instrumentKey] ?? record.instrumentKey,
                summary: summaries.describe(plan), target: target, createdAt: display.dateTime(record.createdAt),
                inactive: record.deactivatedAt != nil)
        }

        let chosenTarget = submission.target ?? "all"
        var targets = [
            SelectOption(
                value: "all", label: localizer.text("console.plans.targetAll", language),
                selected: chosenTarget == "all")
        ]
        targets += StudyArms.names(of: study).map {
            SelectOption(
                value: "arm:\($0)", label: localizer.text("console.plans.targetArm", language, ["arm": $0]),
                selected: chosenTarget == "arm:\($0)")
        }
        targets += participants.map {
            let id = $0.enrollment.$patient.id
            return SelectOption(value: "patient:\(id)", label: $0.label, selected: chosenTarget == "patient:\(id)")
        }
        let previewPatients =
            [SelectOption(value: "", label: localizer.text("console.plans.previewSomeone", language), selected: false)]
            + participants.map {
                let id = $0.enrollment.$patient.id.uuidString
                return SelectOption(value: id, label: $0.label, selected: submission.previewPatient == id)
            }

        let zone = viewer.zone
        let previewFrom = submission.previewFrom.flatMap(LocalDate.init) ?? LocalDate(now, in: zone)
        let previewDays = ScheduleSpan.previewDays(submission.previewDays.flatMap { Int($0) })
        var table: PreviewTable?
        if let draft {
            let previewZone: TimeZone
            let occurrences: [Occurrence]
            if let chosen = submission.previewPatient.flatMap(UUID.init(uuidString:)) {
                let chart: PatientChart
                do {
                    chart = try await PatientChart.open(chosen, in: grant, database: database, services: services)
                } catch AppError.notFound, AppError.forbidden {
                    throw AppError.field("previewPatient", .unknown)
                }
                (previewZone, occurrences) = try await chart.preview(
                    draft, zone: zone, from: previewFrom, days: previewDays)
            } else {
                (previewZone, occurrences) = try await schedules.previewDraft(
                    draft, studyID: studyID, patientID: nil, zone: zone, from: previewFrom, days: previewDays)
            }
            table = PreviewTable(
                from: previewFrom, days: previewDays, zone: previewZone, language: language, localizer: localizer,
                items: occurrences.map { (titles[draft.instrumentKey] ?? draft.instrumentKey, $0) })
        }

        let weekdayNames = Weekday.allCases.map { ($0, localizer.text("weekday.\($0.rawValue)", language)) }
        return PlansContent(
            studyID: studyID.uuidString,
            studyTitle: study.joinMode == .pairingCode
                ? localizer.text("console.plans.practice", language) : study.titles.text(language),
            isPractice: study.joinMode == .pairingCode,
            plans: rows, hasPlans: !rows.isEmpty, form: form,
            kinds: PlanSummary.kinds.map {
                SelectOption(value: $0, label: localizer.text("planKind.\($0)", language), selected: form.kind == $0)
            },
            instruments: published.map {
                SelectOption(value: $0.key, label: titles[$0.key] ?? $0.key, selected: form.instrumentKey == $0.key)
            },
            targets: targets,
            weekdays: weekdayNames.map { weekday, label in
                let field = PlanForm.windowsField(weekday)
                return WeekdayRow(
                    value: weekday.rawValue, label: label, checked: form.weekdays.contains(weekday.rawValue),
                    windowsField: field, windows: Self.windowRows(form.windows(on: weekday)),
                    windowsError: errors.fields[field])
            },
            weekdayOptions: weekdayNames.map {
                SelectOption(value: $0.0.rawValue, label: $0.1, selected: form.weekday == $0.0.rawValue)
            },
            monthDays: (Array(1...28) + [-1]).map { day in
                SelectOption(
                    value: String(day),
                    label: day == -1
                        ? localizer.text("console.plans.lastDayOfMonth", language)
                        : localizer.text("console.plans.monthDay", language, ["day": summaries.dayOfMonth(day)]),
                    selected: form.day == String(day))
            },
            units: UnitChoices(
                duration: unitOptions(form.durationUnit), reminders: unitOptions(form.remindersUnit),
                opensBefore: unitOptions(form.opensBeforeUnit), closesAfterStart: unitOptions(form.closesAfterStartUnit)
            ),
            anchors: SchedulePattern.Anchor.allCases.map {
                SelectOption(
                    value: $0.rawValue, label: localizer.text("planAnchor.\($0.rawValue)", language),
                    selected: form.anchor == $0.rawValue)
            },
            previewPatients: previewPatients, previewFrom: previewFrom.description,
            previewDays: String(previewDays), preview: table, errors: errors, done: done)
    }

    /// The rows filled in, then empty ones: at least `windowRows`, and one more than those filled in.
    static func windowRows(_ rows: [PlanForm.WindowRow]) -> [WindowRowView] {
        let filled = rows.filter { !($0.from + $0.until + $0.count).trimmingCharacters(in: .whitespaces).isEmpty }
        let all =
            filled + Array(repeating: PlanForm.WindowRow(), count: max(windowRows, filled.count + 1) - filled.count)
        return all.enumerated().map {
            WindowRowView(index: $0.offset, from: $0.element.from, until: $0.element.until, count: $0.element.count)
        }
    }

    private func unitOptions(_ chosen: String) -> [SelectOption] {
        TimeUnit.allCases.map {
            SelectOption(
                value: $0.rawValue, label: localizer.text("timeUnit.\($0.rawValue)", language),
                selected: chosen == $0.rawValue)
        }
    }

    /// `charts` are the viewer's charts of one participant; `fromText` and `daysText` as the query gave them.
    func schedule(_ charts: [PatientChart], from fromText: String?, days daysText: String?) async throws
        -> PatientScheduleContent
    {
        let patientID = charts[0].patientID
        let now = services.clock.now
        var errors = FormErrors()
        let fromText = fromText ?? ""
        let daysText = daysText ?? String(ScheduleSpan.defaultDays)
        var from = LocalDate(fromText)
        let days = Int(daysText).flatMap { ScheduleSpan.days($0) }
        if !fromText.isEmpty, from == nil { errors.fields["from"] = localizer.text("field.invalidFormat", language) }
        if days == nil {
            errors.fields["days"] = localizer.text(
                "field.outOfRange", language, ["limit": String(ScheduleSpan.maximumDays)])
        }
        let patient = charts[0].patient
        let profile = charts[0].profile
        if from == nil { from = LocalDate(now, in: patient.zone) }
        var zone = patient.zone
        var planned: [ScheduleService.Planned] = []
        for chart in charts {
            let schedule = try await chart.schedule(from: from!, days: days ?? ScheduleSpan.defaultDays)
            zone = schedule.0
            planned += schedule.1
        }
        planned.sort { $0.occurrence.opensAt < $1.occurrence.opensAt }
        let catalog = InstrumentCatalog(database: database, services: services)
        var titles: [String: String] = [:]
        for key in Set(planned.map(\.plan.instrumentKey)) {
            titles[key] = try await catalog.title(of: key, in: language)
        }
        let back = (viewer.role == .therapist ? ConsoleURL.patient(patientID) : .study(charts[0].studyID)).path
        return PatientScheduleContent(
            patientID: patientID.uuidString, pseudonym: profile.pseudonym, backLink: back,
            from: from!.description, days: daysText,
            preview: PreviewTable(
                from: from!, days: days ?? ScheduleSpan.defaultDays, zone: zone, language: language,
                localizer: localizer,
                items: planned.map { (titles[$0.plan.instrumentKey] ?? $0.plan.instrumentKey, $0.occurrence) }),
            errors: errors)
    }
}
