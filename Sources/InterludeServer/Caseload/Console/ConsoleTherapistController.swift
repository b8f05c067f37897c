import Fluent
import Foundation
import InterludeCore
import Vapor

/// The therapist's console: caseload, one patient's page, pairing codes with their print sheet, own profile.
struct ConsoleTherapistController {
    /// An appointment as the therapist enters it, in the patient's local time.
    struct AppointmentForm: Content {
        /// Made with the form, so a form sent twice books one session.
        var id: String?
        var title: String
        var date: String
        var startTime: String
        var endTime: String
        var comment: String?
    }

    /// The therapist's answer to a patient's request about a session, for the version they saw.
    struct AppointmentDecisionForm: Content {
        var grant: String
        var version: Int
    }

    /// The treatment's names and dates, or (from its own buttons) a new status; ending needs `confirmEnd`.
    struct TreatmentForm: Content {
        var displayName: String?
        var therapyStart: String?
        var therapyEnd: String?
        var status: String?
        var confirmEnd: String?
    }

    /// The caseload search as the therapist typed it.
    struct CaseloadSearch: Content {
        var q: String?
        var status: String?
        var from: String?
        var to: String?
        var sort: String?
        var order: String?
        var cursor: String?

        var filters: [(name: String, value: String)] {
            [("q", q), ("status", status), ("from", from), ("to", to), ("sort", sort), ("order", order)].map {
                ($0, $1 ?? "")
            }
        }
    }

    struct AssignForm: Content {
        var instrumentKey: String
        var opensAt: String
        var closesAt: String
    }

    struct InvitationForm: Content {
        var email: String
        var locale: String?
    }

    struct CodeForm: Content {
        var note: String?
        var count: Int?
    }

    struct ProfileForm: Content {
        var fullName: String
        var gender: String?
        var officeAddress: String?
        var phone: String?
        var emergencyNumber: String?
    }

    /// Which page of the prompts and of the answers the patient's page shows.
    struct HistoryPages: Content {
        var promptsPage: Int?
        var answersPage: Int?
    }

    func register(on routes: any RoutesBuilder) {
        routes.get("patients", use: caseload)
        routes.get("patients", ":patientID", use: patient)
        routes.post("patients", ":patientID", "prompts", use: assign)
        routes.post("patients", ":patientID", "appointments", use: addAppointment)
        routes.post(
            "patients", ":patientID", "appointments", ":appointmentID", "decision", use: decideAppointmentRequest)
        routes.post("patients", ":patientID", "appointments", ":appointmentID", "cancel", use: cancelAppointment)
        routes.post("patients", ":patientID", "treatment", use: updateTreatment)
        routes.post("patients", ":patientID", "password-reset", use: sendPasswordReset)
        routes.post("invitations", use: invite)
        routes.get("patients", ":patientID", "responses", ":responseID", use: response)
        routes.get("patients", ":patientID", "responses", ":responseID", "fhir", use: responseFHIR)
        routes.get("pairing-codes", use: codes)
        routes.post("pairing-codes", use: createCodes)
        routes.get("pairing-codes", "sheet", use: sheet)
        routes.get("profile", use: showProfile)
        routes.post("profile", use: saveProfile)
    }

    static let caseloadPageSize = 50

    func caseload(_ request: Request) async throws -> Response {
        let search = try request.query.decode(CaseloadSearch.self)
        var query = CaseloadQuery()
        var errors = FormErrors()
        var page = try PageRequest(cursor: nil, limit: Self.caseloadPageSize)
        do {
            query = try CaseloadQuery.validate(
                q: search.q, status: search.status, from: search.from, to: search.to, sort: search.sort,
                order: search.order)
            page = try PageRequest(
                cursor: search.cursor.flatMap { $0.isEmpty ? nil : $0 }, limit: Self.caseloadPageSize)
        } catch {
            guard let failure = FormErrors.from(error, request: request) else { throw error }
            errors = failure
        }
        let content = try await pages(request, try request.consoleUser(.therapist)).caseload(
            search, query: query, page: page, errors: errors,
            passwordChanged: request.query[String.self, at: "passwordChanged"] != nil)
        return try await request.renderConsole(
            "console/patients", titleKey: "console.patients.title", content: content,
            status: errors.isEmpty ? .ok : errors.status)
    }

    func patient(_ request: Request) async throws -> Response {
        try await renderPatient(request)
    }

    private func renderPatient(
        _ request: Request, _ state: CaseloadPages.PatientPageState = .init(), status: HTTPResponseStatus = .ok
    ) async throws -> Response {
        let therapist = try request.consoleUser(.therapist)
        var state = state
        state.showPastAppointments = request.query[String.self, at: "pastAppointments"] != nil
        state.planAdded = request.query[String.self, at: "planAdded"] != nil
        let history = try request.query.decode(HistoryPages.self)
        try state.turn(promptsPage: history.promptsPage, answersPage: history.answersPage)
        let content = try await pages(request, therapist).patient(try await Self.chart(request, therapist), state)
        return try await request.renderConsole(
            "console/patient", titleKey: "console.patient.title", content: content, status: status)
    }

    private func pages(_ request: Request, _ therapist: UserRecord) -> CaseloadPages {
        CaseloadPages(therapist: therapist, database: request.db, services: request.services)
    }

    /// Adds an appointment for the patient; date and times are the patient's local time.
    func addAppointment(_ request: Request) async throws -> Response {
        let therapist = try request.consoleUser(.therapist)
        let chart = try await Self.chart(request, therapist)
        let form = try request.content.decode(AppointmentForm.self)
        let zone = chart.patient.zone
        do {
            var validator = FieldValidator()
            let date = LocalDate(form.date)
            let start = LocalTime(form.startTime)
            let end = LocalTime(form.endTime)
            if date == nil { validator.add("date", form.date.isEmpty ? .required : .invalidFormat) }
            if start == nil { validator.add("startsAt", form.startTime.isEmpty ? .required : .invalidFormat) }
            if end == nil { validator.add("endsAt", form.endTime.isEmpty ? .required : .invalidFormat) }
            try validator.check()
            _ = try await chart.addAppointment(
                title: form.title, startsAt: LocalDateTime(date: date!, time: start!).instant(in: zone),
                endsAt: LocalDateTime(date: date!, time: end!).instant(in: zone), comment: form.comment,
                id: try clientID(form.id))
            return try await renderPatient(request, .init(appointmentAdded: true), status: .created)
        } catch {
            guard let errors = FormErrors.from(error, request: request) else { throw error }
            return try await renderPatient(
                request, .init(appointmentForm: form, appointmentErrors: errors), status: errors.status)
        }
    }

    /// Grants or declines the patient's request to move or cancel a session.
    func decideAppointmentRequest(_ request: Request) async throws -> Response {
        let therapist = try request.consoleUser(.therapist)
        let chart = try await Self.chart(request, therapist)
        let form = try request.content.decode(AppointmentDecisionForm.self)
        let grant = form.grant == "yes"
        return try await changeAppointment(request, done: grant ? .granted : .declined) {
            try await chart.decideAppointmentRequest(
                try Self.appointmentID(request), grant: grant, baseVersion: form.version)
        }
    }

    /// Cancels a session the therapist booked.
    func cancelAppointment(_ request: Request) async throws -> Response {
        let therapist = try request.consoleUser(.therapist)
        let chart = try await Self.chart(request, therapist)
        return try await changeAppointment(request, done: .cancelled) {
            try await chart.cancelAppointment(try Self.appointmentID(request))
        }
    }

    /// The patient's page after a change to one of their sessions, saying what happened or why it did not.
    private func changeAppointment(
        _ request: Request, done: CaseloadPages.AppointmentChange, _ change: () async throws -> Void
    ) async throws -> Response {
        do {
            try await change()
            return try await renderPatient(request, .init(appointmentChanged: done))
        } catch {
            guard let errors = FormErrors.from(error, request: request) else { throw error }
            return try await renderPatient(request, .init(appointmentErrors: errors), status: errors.status)
        }
    }

    private static func appointmentID(_ request: Request) throws -> UUID {
        guard let id = request.parameters.get("appointmentID", as: UUID.self) else { throw AppError.notFound }
        return id
    }

    /// Changes the name the client is shown under and the therapy's dates (the patient's days).
    func updateTreatment(_ request: Request) async throws -> Response {
        let therapist = try request.consoleUser(.therapist)
        let chart = try await Self.chart(request, therapist)
        let form = try request.content.decode(TreatmentForm.self)
        do {
            if form.status == TreatmentStatus.ended.rawValue, form.confirmEnd == nil {
                throw AppError.field("confirmEnd", .required)
            }
            let update = try TreatmentUpdate.validate(
                displayName: form.displayName, therapyStart: form.therapyStart, therapyEnd: form.therapyEnd,
                status: form.status,
                current: (
                    chart.profile.therapyStart.flatMap(LocalDate.init), chart.profile.therapyEnd.flatMap(LocalDate.init)
                ))
            _ = try await chart.updateTreatment(update)
            return try await renderPatient(request, .init(treatmentSaved: true))
        } catch {
            guard let errors = FormErrors.from(error, request: request) else { throw error }
            return try await renderPatient(
                request, .init(treatmentForm: form, treatmentErrors: errors), status: errors.status)
        }
    }

    /// Assigns a questionnaire from the patient's page; times are read in the therapist's time zone.
    func assign(_ request: Request) async throws -> Response {
        let therapist = try request.consoleUser(.therapist)
        let chart = try await Self.chart(request, therapist)
        let form = try request.content.decode(AssignForm.self)
        let zone = TimeZone(identifier: therapist.timeZone) ?? .gmt
        do {
            var validator = FieldValidator()
            let opens = LocalDateTime(form.opensAt)
            let closes = LocalDateTime(form.closesAt)
            if opens == nil { validator.add("opensAt", .invalidFormat) }
            if closes == nil { validator.add("closesAt", .invalidFormat) }
            try validator.check()
            _ = try await chart.assignPrompt(
                instrumentKey: form.instrumentKey, opensAt: opens!.instant(in: zone),
                closesAt: closes!.instant(in: zone))
            return try await renderPatient(request, .init(assigned: true), status: .created)
        } catch {
            guard let errors = FormErrors.from(error, request: request) else { throw error }
            return try await renderPatient(
                request, .init(assignForm: form, assignErrors: errors), status: errors.status)
        }
    }

    /// One response's answers in the instrument's order.
    func response(_ request: Request) async throws -> Response {
        let (chart, stored, definition) = try await loadResponse(request)
        let content = try pages(request, chart.viewer).response(chart, stored, definition: definition)
        return try await request.renderConsole("console/response", titleKey: "console.response.title", content: content)
    }

    /// The response as a FHIR R4 QuestionnaireResponse file.
    func responseFHIR(_ request: Request) async throws -> Response {
        let (_, stored, _) = try await loadResponse(request)
        let resource = try await ResponseService(database: request.db, services: request.services).fhirDocument(
            of: stored)
        return try FHIRDownload.response(
            resource, filename: "QuestionnaireResponse-\(try stored.record.requireID().lowercasedText).json")
    }

    /// The therapist's chart of the patient named in the path.
    static func chart(_ request: Request, _ therapist: UserRecord) async throws -> PatientChart {
        guard let patientID = request.parameters.get("patientID", as: UUID.self) else { throw AppError.notFound }
        return try await PatientChart.open(patientID, for: therapist, database: request.db, services: request.services)
    }

    /// The chart and the response named in the path, with the instrument version it answers; not found for
    /// anyone else's patient and for answers given in another study.
    private func loadResponse(_ request: Request) async throws
        -> (PatientChart, ResponseService.Stored, InstrumentDefinition)
    {
        let chart = try await Self.chart(request, try request.consoleUser(.therapist))
        guard let responseID = request.parameters.get("responseID", as: UUID.self) else { throw AppError.notFound }
        let stored = try await chart.response(responseID)
        guard
            let definition = try await InstrumentCatalog(database: request.db, services: request.services)
                .definition(stored.record.instrumentKey, stored.record.instrumentVersion)
        else { throw AppError.notFound }
        return (chart, stored, definition)
    }

    private func renderCodes(
        _ request: Request, fresh: Set<UUID> = [], note: String = "", errors: FormErrors = FormErrors(),
        invitation: PracticePages.InvitationCard = .init(), status: HTTPResponseStatus = .ok
    ) async throws -> Response {
        let content = try await practicePages(request).codes(
            fresh: fresh, note: note, errors: errors, invitation: invitation)
        return try await request.renderConsole(
            "console/pairing-codes", titleKey: "console.pairingCodes.title", content: content, status: status)
    }

    private func practicePages(_ request: Request) throws -> PracticePages {
        PracticePages(therapist: try request.consoleUser(.therapist), database: request.db, services: request.services)
    }

    func codes(_ request: Request) async throws -> Response {
        try await renderCodes(request)
    }

    func createCodes(_ request: Request) async throws -> Response {
        let therapist = try request.consoleUser(.therapist)
        let form = try request.content.decode(CodeForm.self)
        do {
            let created = try await PairingService(database: request.db, services: request.services)
                .createCodes(therapist: therapist, note: form.note, count: form.count ?? 1)
            return try await renderCodes(request, fresh: Set(created.compactMap(\.id)), status: .created)
        } catch {
            guard let errors = FormErrors.from(error, request: request) else { throw error }
            return try await renderCodes(request, note: form.note ?? "", errors: errors, status: errors.status)
        }
    }

    /// Invites a client by email from the pairing codes page.
    func invite(_ request: Request) async throws -> Response {
        let therapist = try request.consoleUser(.therapist)
        let form = try request.content.decode(InvitationForm.self)
        do {
            let sent = try await InvitationService(
                database: request.db, services: request.services, logger: request.logger
            )
            .invite(
                email: form.email, language: form.locale.flatMap(Language.init) ?? therapist.language, by: therapist)
            return try await renderCodes(request, invitation: .init(sentTo: sent.email), status: .created)
        } catch {
            guard let errors = FormErrors.from(error, request: request) else { throw error }
            return try await renderCodes(
                request, invitation: .init(email: form.email, errors: errors), status: errors.status)
        }
    }

    /// Emails the client a link to choose a new password.
    func sendPasswordReset(_ request: Request) async throws -> Response {
        let therapist = try request.consoleUser(.therapist)
        let chart = try await Self.chart(request, therapist)
        try await AccountService(database: request.db, services: request.services, logger: request.logger)
            .sendPasswordReset(to: try await chart.passwordResetRecipient())
        return try await renderPatient(request, .init(passwordResetSent: true))
    }

    /// A print-ready sheet of the chosen open codes (`?id=…&id=…`), or of every open code.
    func sheet(_ request: Request) async throws -> Response {
        let wanted = Set(((try? request.query.get([String].self, at: "id")) ?? []).compactMap(UUID.init(uuidString:)))
        let content = try await practicePages(request).sheet(of: wanted)
        return try await request.renderConsole(
            "console/code-sheet", titleKey: "console.codeSheet.title", content: content)
    }

    private func renderProfile(
        _ request: Request, form: ProfileForm?, saved: Bool = false, errors: FormErrors = FormErrors(),
        status: HTTPResponseStatus = .ok
    ) async throws -> Response {
        let content = try await practicePages(request).profile(form: form, saved: saved, errors: errors)
        return try await request.renderConsole(
            "console/profile", titleKey: "console.profile.title", content: content, status: status)
    }

    func showProfile(_ request: Request) async throws -> Response {
        try await renderProfile(request, form: nil, saved: (try? request.query.get(String.self, at: "saved")) != nil)
    }

    func saveProfile(_ request: Request) async throws -> Response {
        let therapist = try request.consoleUser(.therapist)
        let form = try request.content.decode(ProfileForm.self)
        do {
            _ = try await TherapistProfiles(database: request.db).update(
                therapistID: therapist.requireID(), fullName: form.fullName, gender: form.gender,
                officeAddress: form.officeAddress, phone: form.phone, emergencyNumber: form.emergencyNumber)
            return request.redirect(to: .profile, query: [("saved", "1")])
        } catch {
            guard let errors = FormErrors.from(error, request: request) else { throw error }
            return try await renderProfile(request, form: form, errors: errors, status: errors.status)
        }
    }
}
