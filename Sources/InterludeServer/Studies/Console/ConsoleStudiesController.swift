import Fluent
import Foundation
import InterludeCore
import Vapor

/// The researcher's console: studies, their settings, and the queue of join requests.
struct ConsoleStudiesController {
    struct StudyRow: Encodable, Sendable {
        var id: String
        var title: String
        var joinMode: String
        var status: String
        var statusLabel: String
    }

    struct StudiesContent: Encodable, Sendable {
        var studies: [StudyRow]
        var hasStudies: Bool
        /// Researchers and administrators start studies; a therapist sees those on whose staff they are.
        var canCreate: Bool
        var pendingRequests: Int
    }

    struct StudyForm: Content {
        var title: String
        var description: String?
        var consentText: String
        var consentVersion: String
        var joinMode: String
        var joinPassword: String?
        var status: String?
        /// Arm names, separated by commas.
        var arms: String?
        var allocation: String?
    }

    struct FormContent: Encodable, Sendable {
        var action: String
        var isNew: Bool
        var form: StudyForm
        var joinModes: [SelectOption]
        var statuses: [SelectOption]
        var hasPassword: Bool
        var errors: FormErrors
    }

    struct ParticipantRow: Encodable, Sendable {
        var enrollmentID: String
        var patientID: String
        var compliance: CaseloadPages.ComplianceCell
        var pseudonym: String
        var status: String
        var statusLabel: String
        var since: String
    }

    struct StudyContent: Encodable, Sendable {
        var id: String
        var title: String
        var description: String
        var joinMode: String
        var statusLabel: String
        var consentVersion: String
        var canEdit: Bool
        var canDecide: Bool
        var requests: [ParticipantRow]
        var hasRequests: Bool
        var participants: [ParticipantRow]
        var hasParticipants: Bool
        var saved: Bool
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
        StudyAccess(database: request.db, now: request.services.clock.now)
    }

    /// A research study the staff member may do `permission` in; a practice is not shown here.
    private func grant(_ permission: StudyPermission, _ request: Request, _ user: UserRecord) async throws -> StudyGrant {
        try await access(request).require(permission, in: try studyID(request), by: user)
    }

    func list(_ request: Request) async throws -> Response {
        let user = try request.consoleUser(.therapist, .researcher, .admin)
        let localizer = request.services.localizer
        let studies = try await access(request).studies(where: .viewStudy, for: user, kind: .research)
        let deciding = try await access(request).studies(where: .decideEnrollment, for: user, kind: .research)
        let rows = try studies.map { study in
            StudyRow(
                id: try study.requireID().uuidString, title: study.title,
                joinMode: localizer.text("joinMode.\(study.joinMode.rawValue)", user.language), status: study.status.rawValue,
                statusLabel: localizer.text("studyStatus.\(study.status.rawValue)", user.language))
        }
        return try await request.renderConsole(
            "console/studies", titleKey: "console.studies.title",
            content: StudiesContent(
                studies: rows, hasStudies: !rows.isEmpty, canCreate: user.role != .therapist,
                pendingRequests: try await service(request).pendingRequestCount(in: deciding)))
    }

    private func renderForm(
        _ request: Request, action: String, isNew: Bool, form: StudyForm, hasPassword: Bool,
        errors: FormErrors = FormErrors(), status: HTTPResponseStatus = .ok
    ) async throws -> Response {
        let user = try request.consoleUser(.researcher, .admin)
        let localizer = request.services.localizer
        let joinModes = [JoinMode.open, .password, .approval].map {
            SelectOption(
                value: $0.rawValue, label: localizer.text("joinMode.\($0.rawValue)", user.language),
                selected: form.joinMode == $0.rawValue)
        }
        let statuses = StudyStatus.allCases.map {
            SelectOption(
                value: $0.rawValue, label: localizer.text("studyStatus.\($0.rawValue)", user.language),
                selected: (form.status ?? StudyStatus.running.rawValue) == $0.rawValue)
        }
        return try await request.renderConsole(
            "console/study-form", titleKey: isNew ? "console.studyForm.newTitle" : "console.studyForm.editTitle",
            content: FormContent(
                action: action, isNew: isNew, form: form, joinModes: joinModes, statuses: statuses,
                hasPassword: hasPassword, errors: errors),
            status: status)
    }

    func showNew(_ request: Request) async throws -> Response {
        try await renderForm(
            request, action: ConsoleURL.newStudy.path, isNew: true,
            form: StudyForm(
                title: "", description: "", consentText: "", consentVersion: "1", joinMode: JoinMode.open.rawValue,
                status: StudyStatus.running.rawValue),
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
                request, action: ConsoleURL.newStudy.path, isNew: true, form: form.withoutPassword, hasPassword: false,
                errors: errors, status: errors.status)
        }
    }

    private func studyID(_ request: Request) throws -> UUID {
        guard let id = request.parameters.get("studyID", as: UUID.self) else { throw AppError.notFound }
        return id
    }

    func show(_ request: Request) async throws -> Response {
        let user = try request.consoleUser(.therapist, .researcher, .admin)
        let grant = try await grant(.viewParticipants, request, user)
        let studyID = grant.studyID
        let study = grant.study
        let enrolled = try await service(request).participants(of: grant)
        let localizer = request.services.localizer
        let display = user.dateDisplay
        let compliance = try await PromptService(database: request.db, now: request.services.clock.now)
            .compliance(of: enrolled.map { $0.enrollment.$patient.id }, studies: [studyID])
        let rows = try enrolled.map { participant in
            ParticipantRow(
                enrollmentID: try participant.enrollment.requireID().uuidString,
                patientID: participant.enrollment.$patient.id.uuidString,
                compliance: .init(compliance[participant.enrollment.$patient.id] ?? PromptService.Compliance()),
                pseudonym: participant.pseudonym,
                status: participant.enrollment.status.rawValue,
                statusLabel: localizer.text("enrollmentStatus.\(participant.enrollment.status.rawValue)", user.language),
                since: display.date(participant.enrollment.createdAt))
        }
        let requests = rows.filter { $0.status == EnrollmentStatus.requested.rawValue }
        let participants = rows.filter { $0.status != EnrollmentStatus.requested.rawValue }
        return try await request.renderConsole(
            "console/study", titleKey: "console.study.title",
            content: StudyContent(
                id: studyID.uuidString, title: study.title, description: study.description,
                joinMode: localizer.text("joinMode.\(study.joinMode.rawValue)", user.language),
                statusLabel: localizer.text("studyStatus.\(study.status.rawValue)", user.language),
                consentVersion: study.consentVersion,
                canEdit: grant.allows(.editStudy), canDecide: grant.allows(.decideEnrollment),
                requests: requests, hasRequests: !requests.isEmpty,
                participants: participants, hasParticipants: !participants.isEmpty,
                saved: (try? request.query.get(String.self, at: "saved")) != nil))
    }

    func showEdit(_ request: Request) async throws -> Response {
        let user = try request.consoleUser(.researcher, .admin)
        let grant = try await grant(.editStudy, request, user)
        let studyID = grant.studyID
        let study = grant.study
        return try await renderForm(
            request, action: ConsoleURL.editStudy(studyID).path, isNew: false,
            form: StudyForm(
                title: study.title, description: study.description, consentText: study.consentText,
                consentVersion: study.consentVersion, joinMode: study.joinMode.rawValue, status: study.status.rawValue,
                arms: StudyArms.names(of: study).joined(separator: ", "), allocation: study.allocation?.rawValue),
            hasPassword: study.joinPasswordHash != nil)
    }

    func update(_ request: Request) async throws -> Response {
        let user = try request.consoleUser(.researcher, .admin)
        let grant = try await grant(.editStudy, request, user)
        let studyID = grant.studyID
        let existing = grant.study
        let form = try request.content.decode(StudyForm.self)
        do {
            _ = try await service(request).update(grant, draft: try form.draft(hasPassword: existing.joinPasswordHash != nil))
            return request.redirect(to: .study(studyID), query: [("saved", "1")])
        } catch {
            guard let errors = FormErrors.from(error, request: request) else { throw error }
            return try await renderForm(
                request, action: ConsoleURL.editStudy(studyID).path, isNew: false,
                form: form.withoutPassword, hasPassword: existing.joinPasswordHash != nil, errors: errors,
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
    func draft(hasPassword: Bool) throws -> StudyDraft {
        try StudyDraft.validate(
            title: title, description: description, consentText: consentText, consentVersion: consentVersion,
            joinMode: joinMode, joinPassword: joinPassword, status: status, hasPassword: hasPassword,
            arms: (arms ?? "").split(separator: ",").map(String.init), allocation: allocation)
    }

    /// The form as shown again: a typed password is never echoed back.
    var withoutPassword: Self {
        var copy = self
        copy.joinPassword = nil
        return copy
    }
}
