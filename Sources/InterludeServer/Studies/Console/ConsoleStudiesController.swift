import Fluent
import Foundation
import InterludeCore
import Vapor

/// The researcher's console: studies, their settings, and the queue of join requests.
struct ConsoleStudiesController {
    /// Title, description and consent text in English (`title`) and German (`titleDe`); either may be left empty.
    struct StudyForm: Content {
        var title: String?
        var titleDe: String?
        var description: String?
        var descriptionDe: String?
        /// Written when the study is created; later versions are added on the study's consent page.
        var consentText: String?
        var consentTextDe: String?
        var consentVersion: String?
        var joinMode: String
        var joinPassword: String?
        var status: String?
        /// The arms, a row of the form each: its name (rows without one are left out), its share, how many
        /// participants it needs (empty: no limit), and `control` for a control arm.
        var armName: [String]?
        var armShare: [String]?
        var armTarget: [String]?
        var armReceives: [String]?
        var allocation: String?
        /// `on` when exports carry birth year and gender (a checkbox).
        var asksDemographics: String?
        var retentionDays: String?
        /// `off`, `always` or `afterEnd`.
        var comparison: String?
    }

    func register(on routes: any RoutesBuilder) {
        routes.get("studies", use: list)
        routes.get("studies", "new", use: showNew)
        routes.post("studies", "new", use: create)
        routes.get("studies", ":studyID", use: show)
        routes.get("studies", ":studyID", "edit", use: showEdit)
        routes.post("studies", ":studyID", "edit", use: update)
        routes.post("studies", ":studyID", "enrollments", ":enrollmentID", "decision", use: decide)
    }

    private func service(_ request: Request) -> StudyService {
        StudyService(database: request.db, services: request.services)
    }

    private func access(_ request: Request) -> StudyAccess {
        StudyAccess(database: request.db, services: request.services)
    }

    /// A research study the staff member may do `permission` in; a practice is not shown here.
    private func grant(_ permission: StudyPermission, _ request: Request, _ user: UserRecord) async throws -> StudyGrant
    {
        try await access(request).require(permission, in: try studyID(request), by: user)
    }

    func list(_ request: Request) async throws -> Response {
        let user = try request.consoleUser(.therapist, .researcher, .admin)
        return try await request.renderConsole(
            "console/studies", titleKey: "console.studies.title", content: try await pages(request, user).list())
    }

    private func pages(_ request: Request, _ user: UserRecord) -> StudyPages {
        StudyPages(viewer: user, database: request.db, services: request.services)
    }

    private func renderForm(
        _ request: Request, action: ConsoleURL, form: StudyForm, hasPassword: Bool, errors: FormErrors = FormErrors(),
        status: HTTPResponseStatus = .ok
    ) async throws -> Response {
        let user = try request.consoleUser(.researcher, .admin)
        let isNew = action == .newStudy
        return try await request.renderConsole(
            "console/study-form", titleKey: isNew ? "console.studyForm.newTitle" : "console.studyForm.editTitle",
            content: pages(request, user).form(action: action, form: form, hasPassword: hasPassword, errors: errors),
            status: status)
    }

    func showNew(_ request: Request) async throws -> Response {
        try await renderForm(
            request, action: .newStudy,
            form: StudyForm(
                title: "", description: "", consentText: "", consentVersion: "1", joinMode: JoinMode.open.rawValue,
                status: StudyStatus.running.rawValue, retentionDays: String(StudyDraft.defaultRetentionDays)),
            hasPassword: false)
    }

    func create(_ request: Request) async throws -> Response {
        let user = try request.consoleUser(.researcher, .admin)
        let form = try request.content.decode(StudyForm.self)
        do {
            let study = try await service(request).create(by: user, draft: try form.draft(hasPassword: false))
            return request.redirect(to: .study(try study.requireID()))
        } catch {
            guard let errors = FormErrors.from(error, request: request) else { throw error }
            return try await renderForm(
                request, action: .newStudy, form: form.withoutPassword, hasPassword: false, errors: errors,
                status: errors.status)
        }
    }

    private func studyID(_ request: Request) throws -> UUID {
        guard let id = request.parameters.get("studyID", as: UUID.self) else { throw AppError.notFound }
        return id
    }

    func show(_ request: Request) async throws -> Response {
        let user = try request.consoleUser(.therapist, .researcher, .admin)
        let grant = try await grant(.viewStudy, request, user)
        let content = try await pages(request, user).study(grant, saved: request.query[String.self, at: "saved"] != nil)
        return try await request.renderConsole("console/study", titleKey: "console.study.title", content: content)
    }

    func showEdit(_ request: Request) async throws -> Response {
        let user = try request.consoleUser(.researcher, .admin)
        let grant = try await grant(.editStudy, request, user)
        let studyID = grant.studyID
        let study = grant.study
        return try await renderForm(
            request, action: .editStudy(studyID),
            form: StudyForm(
                title: study.titles.values[.en], titleDe: study.titles.values[.de],
                description: study.descriptions.values[.en], descriptionDe: study.descriptions.values[.de],
                consentText: study.consentText,
                consentVersion: study.consentVersion, joinMode: study.joinMode.rawValue, status: study.status.rawValue,
                allocation: study.allocation?.rawValue,
                asksDemographics: study.asksDemographics ? "on" : nil, retentionDays: String(study.retentionDays),
                comparison: study.comparison.rawValue
            ).withArms(StudyArms.names(of: study), design: StudyArms.design(of: study)),
            hasPassword: study.joinPasswordHash != nil)
    }

    func update(_ request: Request) async throws -> Response {
        let user = try request.consoleUser(.researcher, .admin)
        let grant = try await grant(.editStudy, request, user)
        let studyID = grant.studyID
        let existing = grant.study
        var form = try request.content.decode(StudyForm.self)
        form.consentText = existing.consentText
        form.consentTextDe = nil
        form.consentVersion = existing.consentVersion
        do {
            _ = try await service(request).update(
                grant,
                draft: try form.draft(
                    hasPassword: existing.joinPasswordHash != nil,
                    settings: StudyArms.design(of: existing).map(AllocationSettings.init) ?? AllocationSettings()))
            return request.redirect(to: .study(studyID), query: [("saved", "1")])
        } catch {
            guard let errors = FormErrors.from(error, request: request) else { throw error }
            return try await renderForm(
                request, action: .editStudy(studyID), form: form.withoutPassword,
                hasPassword: existing.joinPasswordHash != nil, errors: errors,
                status: errors.status)
        }
    }

    func decide(_ request: Request) async throws -> Response {
        let user = try request.consoleUser(.researcher, .admin)
        let grant = try await grant(.decideEnrollment, request, user)
        guard let enrollmentID = request.parameters.get("enrollmentID", as: UUID.self) else {
            throw AppError.notFound
        }
        let approve = try request.content.get(String.self, at: "decision") == "approve"
        _ = try await service(request).decide(in: grant, enrollmentID: enrollmentID, approve: approve)
        return request.redirect(to: .study(grant.studyID))
    }
}

extension ConsoleStudiesController.StudyForm {
    /// The form's arm rows and method.
    var armFields: ArmFields {
        ArmFields(
            armName: armName, armShare: armShare, armTarget: armTarget, armReceives: armReceives,
            allocation: allocation)
    }

    /// The form with a study's arms and their shares, targets and control arms.
    func withArms(_ names: [String], design: AllocationDesign?) -> Self {
        var copy = self
        let fields = ArmFields(allocation: allocation).withArms(names, design: design)
        copy.armName = fields.armName
        copy.armShare = fields.armShare
        copy.armTarget = fields.armTarget
        copy.armReceives = fields.armReceives
        return copy
    }

    /// The allocation's method settings the form has no fields for (blocks, factors, cycles) stay `settings`.
    func draft(hasPassword: Bool, settings: AllocationSettings = AllocationSettings()) throws -> StudyDraft {
        let (names, settings) = armFields.arms(settings: settings)
        return try StudyDraft.validate(
            title: [.en: title, .de: titleDe], description: [.en: description, .de: descriptionDe],
            consentText: [.en: consentText, .de: consentTextDe], consentVersion: consentVersion,
            joinMode: joinMode, joinPassword: joinPassword, status: status, hasPassword: hasPassword,
            arms: names, allocation: allocation,
            allocationSettings: settings, asksDemographics: asksDemographics == "on",
            // Text that is no whole number lies outside every range.
            retentionDays: retentionDays.map { Int($0.trimmingCharacters(in: .whitespaces)) ?? -1 }
                ?? StudyDraft.defaultRetentionDays,
            comparison: comparison)
    }

    /// The form as shown again: a typed password is never echoed back.
    var withoutPassword: Self {
        var copy = self
        copy.joinPassword = nil
        return copy
    }
}
