import Fluent
import Foundation
import InterludeCore
import Vapor

/// Plans in the console: attaching them to a study (everyone, one arm or one patient), removing them,
/// previewing a plan before it goes live, and any participant's calendar for any period.
struct ConsoleScheduleController {
    /// What the form posts: the plan, whom it is for, and, for a preview, whose calendar and which period.
    struct PlanSubmission: Content {
        var target: String?
        var action: String?
        var previewPatient: String?
        var previewFrom: String?
        var previewDays: String?
    }

    func register(on routes: any RoutesBuilder) {
        routes.get("plans", use: practicePlans)
        routes.get("studies", ":studyID", "plans", use: plans)
        routes.post("studies", ":studyID", "plans", use: submit)
        routes.post("studies", ":studyID", "plans", ":planID", "delete", use: delete)
        routes.post("studies", ":studyID", "plans", ":planID", "deactivate") { try await setActive(false, $0) }
        routes.post("studies", ":studyID", "plans", ":planID", "activate") { try await setActive(true, $0) }
        routes.get("schedule", ":patientID", use: patientSchedule)
    }

    private func schedules(_ request: Request) -> ScheduleService {
        ScheduleService(database: request.db, services: request.services)
    }

    /// The study in the path, if the staff member holds `permission` in it.
    private func grant(_ permission: StudyPermission, _ request: Request, _ user: UserRecord) async throws -> StudyGrant {
        guard let id = request.parameters.get("studyID", as: UUID.self) else { throw AppError.notFound }
        return try await StudyAccess(database: request.db, services: request.services).require(permission, in: id, by: user)
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
        form.duration = "1"
        return try await render(
            request, form: form, submission: PlanSubmission(target: request.query[String.self, at: "target"]),
            done: request.query[String.self, at: "done"].flatMap(SchedulePages.PlanChange.init))
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
            return request.redirect(to: .plans(study: studyID), query: [("done", SchedulePages.PlanChange.created.rawValue)])
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
        return request.redirect(to: .plans(study: studyID), query: [("done", SchedulePages.PlanChange.removed.rawValue)])
    }

    /// Deactivates a plan's questionnaire or activates it again.
    func setActive(_ active: Bool, _ request: Request) async throws -> Response {
        let grant = try await grant(.editPlans, request, try request.consoleUser(.therapist, .researcher, .admin))
        guard let planID = request.parameters.get("planID", as: UUID.self) else { throw AppError.notFound }
        _ = try await schedules(request).setActive(active, try await schedules(request).plan(planID), in: grant)
        let change: SchedulePages.PlanChange = active ? .activated : .deactivated
        return request.redirect(to: .plans(study: grant.studyID), query: [("done", change.rawValue)])
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
        errors: FormErrors = FormErrors(), done: SchedulePages.PlanChange? = nil
    ) async throws -> Response {
        let user = try request.consoleUser(.therapist, .researcher, .admin)
        let grant = try await grant(.viewPlans, request, user)
        let content = try await SchedulePages(viewer: user, database: request.db, services: request.services)
            .plans(grant, form: form, submission: submission, preview: draft, errors: errors, done: done)
        return try await request.renderConsole(
            "console/plans", titleKey: "console.plans.title", content: content,
            script: "/js/pages/plan-form.js", status: errors.isEmpty ? .ok : errors.status)
    }

    /// One participant's prompts for any period, as their plans produce them, in their local time.
    func patientSchedule(_ request: Request) async throws -> Response {
        let user = try request.consoleUser(.therapist, .researcher, .admin)
        guard let patientID = request.parameters.get("patientID", as: UUID.self) else { throw AppError.notFound }
        let charts = try await PatientChart.charts(of: patientID, for: user, database: request.db, services: request.services)
        let content = try await SchedulePages(viewer: user, database: request.db, services: request.services)
            .schedule(charts, from: request.query[String.self, at: "from"], days: request.query[String.self, at: "days"])
        return try await request.renderConsole(
            "console/schedule", titleKey: "console.schedule.title", content: content,
            status: content.errors.isEmpty ? .ok : .unprocessableEntity)
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

    private func duration(_ minutes: Int) -> String { localizer.duration(minutes: minutes, language) }

    /// "the 1st", "the 22nd" in English, "1." in German.
    func dayOfMonth(_ day: Int) -> String {
        let specific = "planSummary.dayOfMonth.\(day)"
        return localizer.has(specific) ? text(specific) : text("planSummary.dayOfMonth", ["day": String(day)])
    }

    /// "08:00 to 11:59: 2 prompts, 12:00 to 15:59: 1 prompt".
    private func windows(_ windows: [TimeWindow]) -> String {
        windows.map { window in
            text(
                "planSummary.window",
                ["from": window.start.description, "until": window.end.description,
                    "count": localizer.text("planSummary.prompts", count: window.count, language)])
        }.joined(separator: ", ")
    }

    func describe(_ plan: SchedulePlan) -> String {
        var parts = [pattern(plan.pattern), text("planSummary.open", ["duration": duration(plan.durationMinutes)])]
        if !plan.reminderMinutes.isEmpty {
            parts.append(text("planSummary.reminders", ["durations": plan.reminderMinutes.map(duration).joined(separator: ", ")]))
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
                windows(days[$0]!)
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
                : text("planSummary.monthly", ["day": self.dayOfMonth(dayOfMonth), "time": time.description])
        case .relative(let anchor, let offsets, let every, let count, let time):
            let anchorName = text("planAnchor.\(anchor.rawValue)")
            if let every, let count {
                return text(
                    "planSummary.relativeRepeat",
                    ["every": localizer.text("unit.day", count: every, language), "count": String(count), "anchor": anchorName,
                        "time": time.description,
                        "first": String(offsets.first ?? 0)])
            }
            return text(
                "planSummary.relative",
                [
                    "days": localizer.text("planSummary.dayNumbers", count: offsets.count, language, ["days": offsets.map(String.init).joined(separator: ", ")]),
                    "anchor": anchorName, "time": time.description,
                ])
        case .appointment(let before, let after):
            return text("planSummary.appointment", ["before": duration(before), "after": duration(after)])
        case .once:
            return text("planSummary.once")
        case .onDemand:
            return text("planSummary.onDemand")
        }
    }
}
