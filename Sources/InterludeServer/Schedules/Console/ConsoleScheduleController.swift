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
    private func grant(_ permission: StudyPermission, _ request: Request, _ user: UserRecord) async throws -> StudyGrant
    {
        guard let id = request.parameters.get("studyID", as: UUID.self) else { throw AppError.notFound }
        return try await StudyAccess(database: request.db, services: request.services).require(
            permission, in: id, by: user)
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
            return request.redirect(
                to: .plans(study: studyID), query: [("done", SchedulePages.PlanChange.created.rawValue)])
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
        return request.redirect(
            to: .plans(study: studyID), query: [("done", SchedulePages.PlanChange.removed.rawValue)])
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
        let charts = try await PatientChart.charts(
            of: patientID, for: user, database: request.db, services: request.services)
        let content = try await SchedulePages(viewer: user, database: request.db, services: request.services)
            .schedule(
                charts, from: request.query[String.self, at: "from"], days: request.query[String.self, at: "days"])
        return try await request.renderConsole(
            "console/schedule", titleKey: "console.schedule.title", content: content,
            status: content.errors.isEmpty ? .ok : .unprocessableEntity)
    }
}
