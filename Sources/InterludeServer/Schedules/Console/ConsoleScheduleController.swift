import Fluent
import Foundation
import InterludeCore
import Vapor

/// Plans in the console: attaching them to a study (everyone, one arm or one patient), removing them,
/// previewing a plan before it goes live, and any participant's calendar for any period.
struct ConsoleScheduleController {
    struct PlanRow: Encodable, Sendable {
        var id: String
        var title: String
        var summary: String
        var target: String
        var createdAt: String
    }

    struct WeekdayRow: Encodable, Sendable {
        var value: String
        var label: String
        var checked: Bool
        var windowsField: String
        var windows: String
        var windowsError: String?
    }

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
        var anchors: [SelectOption]
        var previewPatients: [SelectOption]
        var previewFrom: String
        var previewDays: String
        var preview: PreviewTable?
        var errors: FormErrors
        var created: Bool
        var removed: Bool
    }

    /// What the form posts: the plan, whom it is for, and, for a preview, whose calendar and which period.
    struct PlanSubmission: Content {
        var target: String?
        var action: String?
        var previewPatient: String?
        var previewFrom: String?
        var previewDays: String?
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

    func register(on routes: any RoutesBuilder) {
        routes.get("plans", use: practicePlans)
        routes.get("studies", ":studyID", "plans", use: plans)
        routes.post("studies", ":studyID", "plans", use: submit)
        routes.post("studies", ":studyID", "plans", ":planID", "delete", use: delete)
        routes.get("schedule", ":patientID", use: patientSchedule)
    }

    private func schedules(_ request: Request) -> ScheduleService {
        ScheduleService(database: request.db, now: request.services.clock.now)
    }

    /// The study in the path, if the staff member holds `permission` in it.
    private func grant(_ permission: StudyPermission, _ request: Request, _ user: UserRecord) async throws -> StudyGrant {
        guard let id = request.parameters.get("studyID", as: UUID.self) else { throw AppError.notFound }
        return try await StudyAccess(database: request.db, now: request.services.clock.now).require(permission, in: id, by: user)
    }

    /// A therapist's plans live in their practice.
    func practicePlans(_ request: Request) async throws -> Response {
        let therapist = try request.consoleUser(.therapist)
        let practice = try await PairingService(database: request.db, services: request.services)
            .practice(of: therapist.requireID())
        return request.redirect(to: .plans(study: try practice.requireID()))
    }

    func plans(_ request: Request) async throws -> Response {
        var form = PlanForm()
        form.durationMinutes = "60"
        return try await render(
            request, form: form, submission: PlanSubmission(target: request.query[String.self, at: "target"]),
            created: request.query[String.self, at: "created"] != nil,
            removed: request.query[String.self, at: "removed"] != nil)
    }

    /// Attaches the plan, or with `action=preview` shows what it would give without attaching anything.
    func submit(_ request: Request) async throws -> Response {
        let user = try request.consoleUser(.therapist, .researcher, .admin)
        let form = try request.content.decode(PlanForm.self)
        let submission = try request.content.decode(PlanSubmission.self)
        let grant = try await grant(submission.action == "preview" ? .viewPlans : .editPlans, request, user)
        let studyID = grant.studyID
        do {
            let plan = try form.plan()
            if submission.action == "preview" {
                return try await render(request, form: form, submission: submission, preview: plan)
            }
            let (patientID, arm) = try Self.target(submission.target)
            _ = try await schedules(request).create(plan, in: grant, patientID: patientID, arm: arm)
            if user.role == .therapist, let patientID {
                return request.redirect(to: .patient(patientID), query: [("planAdded", "1")])
            }
            return request.redirect(to: .plans(study: studyID), query: [("created", "1")])
        } catch {
            guard var errors = FormErrors.from(error, request: request) else { throw error }
            // The form chooses arm and patient in one field.
            if let target = errors.fields["arm"] ?? errors.fields["patientId"] { errors.fields["target"] = target }
            return try await render(request, form: form, submission: submission, errors: errors)
        }
    }

    func delete(_ request: Request) async throws -> Response {
        let grant = try await grant(.editPlans, request, try request.consoleUser(.therapist, .researcher, .admin))
        let studyID = grant.studyID
        guard let planID = request.parameters.get("planID", as: UUID.self) else { throw AppError.notFound }
        try await schedules(request).delete(try await schedules(request).plan(planID), in: grant)
        return request.redirect(to: .plans(study: studyID), query: [("removed", "1")])
    }

    /// `all`, `arm:<name>` or `patient:<id>`.
    static func target(_ value: String?) throws -> (UUID?, String?) {
        let value = value ?? "all"
        if value == "all" { return (nil, nil) }
        if value.hasPrefix("arm:") { return (nil, String(value.dropFirst(4))) }
        if value.hasPrefix("patient:"), let id = UUID(uuidString: String(value.dropFirst(8))) { return (id, nil) }
        throw AppError.field("target", .invalidValue)
    }

    private func render(
        _ request: Request, form: PlanForm, submission: PlanSubmission, preview draft: SchedulePlan? = nil,
        errors: FormErrors = FormErrors(), created: Bool = false, removed: Bool = false
    ) async throws -> Response {
        let user = try request.consoleUser(.therapist, .researcher, .admin)
        let grant = try await grant(.viewPlans, request, user)
        let studyID = grant.studyID
        let schedules = schedules(request)
        let study = grant.study
        let now = request.services.clock.now
        let localizer = request.services.localizer
        let language = user.language
        let catalog = InstrumentCatalog(database: request.db, now: now)
        let published = try await catalog.overview().filter { $0.isPublished && $0.isUsable(in: studyID) }
        var titles: [String: String] = [:]
        for record in published { titles[record.key] = record.title(in: language) }

        let participants = try await StudyService(database: request.db, services: request.services).participants(of: grant)
            .filter { $0.enrollment.status == EnrollmentStatus.active }.sorted { $0.label < $1.label }
        let pseudonyms = Dictionary(participants.map { ($0.enrollment.$patient.id, $0.label) }, uniquingKeysWith: { first, _ in first })
        let summaries = PlanSummary(localizer: localizer, language: language)
        let display = user.dateDisplay
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
                summary: summaries.describe(plan), target: target, createdAt: display.dateTime(record.createdAt))
        }

        let chosenTarget = submission.target ?? "all"
        var targets = [SelectOption(value: "all", label: localizer.text("console.plans.targetAll", language), selected: chosenTarget == "all")]
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

        let zone = user.zone
        let previewFrom = submission.previewFrom.flatMap(LocalDate.init) ?? LocalDate(now, in: zone)
        let previewDays = ScheduleSpan.previewDays(submission.previewDays.flatMap { Int($0) })
        var table: PreviewTable?
        if let draft {
            let previewZone: TimeZone
            let occurrences: [Occurrence]
            if let chosen = submission.previewPatient.flatMap(UUID.init(uuidString:)) {
                let chart: PatientChart
                do {
                    chart = try await PatientChart.open(chosen, in: grant, database: request.db, services: request.services)
                } catch AppError.notFound, AppError.forbidden {
                    throw AppError.field("previewPatient", .unknown)
                }
                (previewZone, occurrences) = try await chart.preview(draft, zone: zone, from: previewFrom, days: previewDays)
            } else {
                (previewZone, occurrences) = try await schedules.previewDraft(
                    draft, studyID: studyID, patientID: nil, zone: zone, from: previewFrom, days: previewDays)
            }
            table = PreviewTable(
                from: previewFrom, days: previewDays, zone: previewZone, language: language, localizer: localizer,
                items: occurrences.map { (titles[draft.instrumentKey] ?? draft.instrumentKey, $0) })
        }

        let weekdayNames = Weekday.allCases.map { ($0, localizer.text("weekday.\($0.rawValue)", language)) }
        return try await request.renderConsole(
            "console/plans", titleKey: "console.plans.title",
            content: PlansContent(
                studyID: studyID.uuidString,
                studyTitle: study.joinMode == .pairingCode
                    ? localizer.text("console.plans.practice", language) : study.title,
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
                        windowsField: field, windows: form.windows(on: weekday), windowsError: errors.fields[field])
                },
                weekdayOptions: weekdayNames.map {
                    SelectOption(value: $0.0.rawValue, label: $0.1, selected: form.weekday == $0.0.rawValue)
                },
                anchors: SchedulePattern.Anchor.allCases.map {
                    SelectOption(
                        value: $0.rawValue, label: localizer.text("planAnchor.\($0.rawValue)", language),
                        selected: form.anchor == $0.rawValue)
                },
                previewPatients: previewPatients, previewFrom: previewFrom.description,
                previewDays: String(previewDays), preview: table, errors: errors, created: created, removed: removed),
            script: "/js/pages/plan-form.js", status: errors.isEmpty ? .ok : errors.status)
    }

    /// One participant's prompts for any period, as their plans produce them, in their local time.
    func patientSchedule(_ request: Request) async throws -> Response {
        let user = try request.consoleUser(.therapist, .researcher, .admin)
        guard let patientID = request.parameters.get("patientID", as: UUID.self) else { throw AppError.notFound }
        let charts = try await PatientChart.charts(of: patientID, for: user, database: request.db, services: request.services)
        let now = request.services.clock.now
        let localizer = request.services.localizer
        var errors = FormErrors()
        let fromText = request.query[String.self, at: "from"] ?? ""
        let daysText = request.query[String.self, at: "days"] ?? String(ScheduleSpan.defaultDays)
        var from = LocalDate(fromText)
        let days = Int(daysText).flatMap { ScheduleSpan.days($0) }
        if !fromText.isEmpty, from == nil { errors.fields["from"] = localizer.text("field.invalidFormat", user.language) }
        if days == nil { errors.fields["days"] = localizer.text("field.outOfRange", user.language, ["limit": String(ScheduleSpan.maximumDays)]) }
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
        let catalog = InstrumentCatalog(database: request.db, now: now)
        var titles: [String: String] = [:]
        for key in Set(planned.map(\.plan.instrumentKey)) {
            titles[key] = try await catalog.title(of: key, in: user.language)
        }
        let back = (user.role == .therapist ? ConsoleURL.patient(patientID) : .study(charts[0].studyID)).path
        return try await request.renderConsole(
            "console/schedule", titleKey: "console.schedule.title",
            content: PatientScheduleContent(
                patientID: patientID.uuidString, pseudonym: profile.pseudonym, backLink: back,
                from: from!.description, days: daysText,
                preview: PreviewTable(
                    from: from!, days: days ?? ScheduleSpan.defaultDays, zone: zone, language: user.language, localizer: localizer,
                    items: planned.map { (titles[$0.plan.instrumentKey] ?? $0.plan.instrumentKey, $0.occurrence) }),
                errors: errors),
            status: errors.isEmpty ? .ok : .unprocessableEntity)
    }
}

/// A period day by day in a participant's local time, with the UTC offset of each day so daylight-saving
/// changes show.
struct PreviewTable: Encodable, Sendable {
    struct Item: Encodable, Sendable {
        var title: String
        var opens: String
        var closes: String
    }

    struct Day: Encodable, Sendable {
        var date: String
        var label: String
        var offset: String
        var offsetChanged: Bool
        var items: [Item]
        var hasItems: Bool
    }

    var timeZone: String
    var days: [Day]
    var count: Int

    init(from: LocalDate, days: Int, zone: TimeZone, language: Language, localizer: Localizer, items: [(String, Occurrence)]) {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: language == .de ? "de_AT" : "en_GB")
        formatter.timeZone = .gmt
        formatter.setLocalizedDateFormatFromTemplate("EEE d MMM yyyy")
        let byDay = Dictionary(grouping: items) { LocalDate($0.1.opensAt, in: zone) }
        var previousOffset: Int?
        var result: [Day] = []
        for index in 0..<days {
            let date = from.adding(days: index)
            let noon = LocalDateTime(date: date, time: LocalTime(hour: 12, minute: 0)!).instant(in: zone)
            let offset = zone.secondsFromGMT(for: noon)
            let entries = (byDay[date] ?? []).sorted { $0.1.opensAt < $1.1.opensAt }.map { title, occurrence in
                let closes = LocalDateTime(occurrence.closesAt, in: zone)
                return Item(
                    title: title, opens: LocalDateTime(occurrence.opensAt, in: zone).time.description,
                    closes: closes.date == date ? closes.time.description : "\(closes.date) \(closes.time)")
            }
            result.append(
                Day(
                    date: date.description, label: formatter.string(from: LocalDateTime(date: date, time: LocalTime(hour: 12, minute: 0)!).instant(in: .gmt)),
                    offset: Self.offset(offset), offsetChanged: previousOffset != nil && previousOffset != offset,
                    items: entries, hasItems: !entries.isEmpty))
            previousOffset = offset
        }
        self.timeZone = zone.identifier
        self.days = result
        self.count = items.count
    }

    static func offset(_ seconds: Int) -> String {
        let sign = seconds < 0 ? "−" : "+"
        let minutes = abs(seconds) / 60
        return String(format: "UTC%@%02d:%02d", sign, minutes / 60, minutes % 60)
    }
}

/// A plan in one line, in the reader's language.
struct PlanSummary {
    static let kinds = ["fixedTimes", "randomWindows", "weekly", "monthly", "relative", "appointment", "once", "onDemand"]

    let localizer: Localizer
    let language: Language

    private func text(_ key: String, _ arguments: [String: String] = [:]) -> String {
        localizer.text(key, language, arguments)
    }

    private func day(_ weekday: Weekday) -> String { text("weekday.\(weekday.rawValue)") }

    func describe(_ plan: SchedulePlan) -> String {
        var parts = [pattern(plan.pattern), text("planSummary.open", ["minutes": String(plan.durationMinutes)])]
        if !plan.reminderMinutes.isEmpty {
            parts.append(text("planSummary.reminders", ["minutes": plan.reminderMinutes.map(String.init).joined(separator: ", ")]))
        }
        if plan.startAfterDays > 0 { parts.append(text("planSummary.startAfter", ["days": String(plan.startAfterDays)])) }
        if let first = plan.firstDate { parts.append(text("planSummary.from", ["date": first.description])) }
        if let last = plan.lastDate { parts.append(text("planSummary.until", ["date": last.description])) }
        if let bounds = plan.adjustment {
            parts.append(
                text(
                    "planSummary.adjustable",
                    ["earliest": bounds.earliest.description, "latest": bounds.latest.description,
                        "min": String(bounds.minCount), "max": String(bounds.maxCount)]))
        }
        return parts.joined(separator: " · ")
    }

    private func pattern(_ pattern: SchedulePattern) -> String {
        switch pattern {
        case .fixedTimes(let times, let weekdays):
            let days = Set(weekdays) == Set(Weekday.allCases) ? text("planSummary.everyDay") : weekdays.map(day).joined(separator: ", ")
            return text("planSummary.fixedTimes", ["times": times.map(\.description).joined(separator: ", "), "days": days])
        case .randomWindows(let days):
            let grouped = Dictionary(grouping: Weekday.allCases.filter { days[$0]?.isEmpty == false }) {
                PlanForm.describe(days[$0]!)
            }
            let described = grouped.sorted { $0.value[0] < $1.value[0] }.map { windows, weekdays in
                let names = weekdays.count == 7 ? text("planSummary.everyDay") : weekdays.map(day).joined(separator: ", ")
                return "\(names): \(windows)"
            }
            return text("planSummary.randomWindows", ["windows": described.joined(separator: "; ")])
        case .weekly(let weekday, let time):
            return text("planSummary.weekly", ["day": day(weekday), "time": time.description])
        case .monthly(let dayOfMonth, let time):
            return dayOfMonth == -1
                ? text("planSummary.monthlyLast", ["time": time.description])
                : text("planSummary.monthly", ["day": String(dayOfMonth), "time": time.description])
        case .relative(let anchor, let offsets, let every, let count, let time):
            let anchorName = text("planAnchor.\(anchor.rawValue)")
            if let every, let count {
                return text(
                    "planSummary.relativeRepeat",
                    ["every": String(every), "count": String(count), "anchor": anchorName, "time": time.description,
                        "first": String(offsets.first ?? 0)])
            }
            return text(
                "planSummary.relative",
                ["days": offsets.map(String.init).joined(separator: ", "), "anchor": anchorName, "time": time.description])
        case .appointment(let before, let after):
            return text("planSummary.appointment", ["before": String(before), "after": String(after)])
        case .once:
            return text("planSummary.once")
        case .onDemand:
            return text("planSummary.onDemand")
        }
    }
}
