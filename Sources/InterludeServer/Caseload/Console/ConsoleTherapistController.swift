import Fluent
import Foundation
import InterludeCore
import Vapor

/// The therapist's console: caseload, one patient's page, pairing codes with their print sheet, own profile.
struct ConsoleTherapistController {
    struct PatientRow: Encodable, Sendable {
        var id: String
        var pseudonym: String
        var name: String
        var pairedSince: String
        var lastActivity: String
        var compliance: ComplianceCell
        /// Alerts about the patient that wait for acknowledgement.
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
        var hasPatients: Bool
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
        var appointmentForm: AppointmentForm
        var appointmentAdded: Bool
        var appointmentErrors: FormErrors
        var timeZone: String
        var reach: String
        var notifications: [NotificationRow]
        var hasNotifications: Bool
    }

    /// An appointment as the therapist enters it, in the patient's local time.
    struct AppointmentForm: Content {
        var title: String
        var date: String
        var startTime: String
        var endTime: String
        var comment: String?
    }

    struct AssignForm: Content {
        var instrumentKey: String
        var opensAt: String
        var closesAt: String
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
    }

    struct CodeRow: Encodable, Sendable {
        var id: String
        var code: String
        var note: String
        var status: String
        var statusLabel: String
        var createdAt: String
        var expiresAt: String
        var redeemedAt: String
        var fresh: Bool
    }

    struct CodesContent: Encodable, Sendable {
        var codes: [CodeRow]
        var hasCodes: Bool
        var errors: FormErrors
        var note: String
    }

    struct CodeForm: Content {
        var note: String?
        var count: Int?
    }

    struct SheetContent: Encodable, Sendable {
        var codes: [SheetCode]
        var appURL: String
        var therapistName: String
    }

    struct SheetCode: Encodable, Sendable {
        var code: String
        var expiresAt: String
    }

    struct ProfileForm: Content {
        var fullName: String
        var gender: String?
        var officeAddress: String?
        var phone: String?
        var emergencyNumber: String?
    }

    struct ProfileContent: Encodable, Sendable {
        var form: ProfileForm
        var genders: [SelectOption]
        var saved: Bool
        var errors: FormErrors
    }

    func register(on routes: any RoutesBuilder) {
        routes.get("patients", use: caseload)
        routes.get("patients", ":patientID", use: patient)
        routes.post("patients", ":patientID", "prompts", use: assign)
        routes.post("patients", ":patientID", "appointments", use: addAppointment)
        routes.get("patients", ":patientID", "responses", ":responseID", use: response)
        routes.get("patients", ":patientID", "responses", ":responseID", "fhir", use: responseFHIR)
        routes.get("pairing-codes", use: codes)
        routes.post("pairing-codes", use: createCodes)
        routes.get("pairing-codes", "sheet", use: sheet)
        routes.get("profile", use: showProfile)
        routes.post("profile", use: saveProfile)
    }

    func caseload(_ request: Request) async throws -> Response {
        let therapist = try request.consoleUser(.therapist)
        let display = therapist.dateDisplay
        let entries = try await Caseloads(database: request.db).caseload(of: therapist.requireID())
        try await AuditLog(database: request.db, now: request.services.clock.now)
            .record(actor: therapist, action: .caseloadRead, patients: try entries.map { try $0.patient.requireID() })
        let compliance = try await PromptService(database: request.db, now: request.services.clock.now).compliance(
            of: try entries.map { try $0.patient.requireID() }, studies: Set(entries.map { $0.enrollment.$study.id }))
        let alerts = try await AlertService(database: request.db, services: request.services).openCounts(for: therapist)
        let rows = try entries.map { entry in
            let id = try entry.patient.requireID()
            return PatientRow(
                id: id.uuidString, pseudonym: entry.profile.pseudonym,
                name: entry.patient.name ?? "", pairedSince: display.date(entry.enrollment.createdAt),
                lastActivity: display.dateTime(entry.patient.lastActiveAt),
                compliance: ComplianceCell(compliance[id] ?? PromptService.Compliance()), openAlerts: alerts[id] ?? 0)
        }
        return try await request.renderConsole(
            "console/patients", titleKey: "console.patients.title",
            content: CaseloadContent(
                patients: rows, hasPatients: !rows.isEmpty, passwordChanged: (try? request.query.get(String.self, at: "passwordChanged")) != nil))
    }

    func patient(_ request: Request) async throws -> Response {
        try await renderPatient(request)
    }

    private func renderPatient(
        _ request: Request, form: AssignForm? = nil, assigned: Bool = false, errors: FormErrors = FormErrors(),
        appointment: AppointmentForm? = nil, appointmentAdded: Bool = false,
        appointmentErrors: FormErrors = FormErrors(), status: HTTPResponseStatus = .ok
    ) async throws -> Response {
        let therapist = try request.consoleUser(.therapist)
        guard let patientID = request.parameters.get("patientID", as: UUID.self) else { throw AppError.notFound }
        let entry = try await Caseloads(database: request.db).patient(patientID, of: therapist.requireID())
        let practiceID = entry.enrollment.$study.id
        let now = request.services.clock.now
        let audit = AuditLog(database: request.db, now: now)
        try await audit.record(actor: therapist, action: .patientRead, patients: [patientID])
        let display = therapist.dateDisplay
        let localizer = request.services.localizer
        let language = therapist.language
        let catalog = InstrumentCatalog(database: request.db, now: now)
        // The practice's prompts only: what the patient answers in research studies is not the therapist's.
        let promptService = PromptService(database: request.db, now: now)
        let allPrompts = try await promptService.prompts(of: patientID, statuses: Set(PromptStatus.allCases))
            .filter { $0.record.$study.id == nil || $0.record.$study.id == practiceID }
        let prompts = allPrompts.filter { $0.status != .scheduled }
        let practicePrompts = Set(allPrompts.compactMap(\.record.id))
        let responses = try await ResponseService(database: request.db, services: request.services).responses(of: patientID)
            .filter { response in response.record.$prompt.id.map(practicePrompts.contains) ?? true }
        if !responses.isEmpty {
            try await audit.record(actor: therapist, action: .responsesRead, patients: [patientID])
        }
        let definitions = try await catalog.definitions(
            Set(prompts.map { InstrumentVersionKey(key: $0.record.instrumentKey, version: $0.record.instrumentVersion) }
                + responses.map { InstrumentVersionKey(key: $0.record.instrumentKey, version: $0.record.instrumentVersion) }))
        let results = PatientResults(language: language, display: display, localizer: localizer)
        let zone = TimeZone(identifier: therapist.timeZone) ?? .gmt
        let published = try await catalog.overview().filter(\.isPublished)
        var titles: [String: String] = [:]
        for record in published { titles[record.key] = (try? record.decodedDefinition().title.text(language)) ?? record.title }
        let instruments = published.map { record in
            SelectOption(value: record.key, label: titles[record.key] ?? record.key, selected: record.key == form?.instrumentKey)
        }
        let promptRows = results.prompts(prompts, definitions: definitions)
        let sections = results.sections(responses, definitions: definitions)
        let compliance = try await promptService.compliance(of: [patientID], studies: [practiceID])[patientID]

        let summaries = PlanSummary(localizer: localizer, language: language)
        let plans = try await ScheduleService(database: request.db, now: now).plans(reaching: patientID)
            .filter { $0.plan.$study.id == practiceID }
            .map { item in
                PatientPlanRow(
                    title: titles[item.definition.instrumentKey] ?? item.definition.instrumentKey,
                    summary: summaries.describe(item.definition), onlyForPatient: item.plan.$patient.id == patientID)
            }

        let showPast = request.query[String.self, at: "pastAppointments"] != nil
        let appointmentService = AppointmentService(database: request.db, services: request.services)
        let patientZone = entry.patient.zone
        let appointments = try await appointmentService.appointments(of: patientID, includePast: showPast)
        try await audit.record(actor: therapist, action: .appointmentsRead, patients: [patientID])
        let appointmentDisplay = DateDisplay(language: language, timeZone: patientZone)
        let appointmentRows = appointments.map { shown in
            let end = LocalDateTime(shown.record.endsAt, in: patientZone).time
            return AppointmentRow(
                title: shown.title, when: "\(appointmentDisplay.dateTime(shown.record.startsAt))–\(end)",
                comment: shown.comment, past: shown.record.endsAt <= now)
        }
        let today = LocalDate(now, in: patientZone)
        let reach = try await DeviceService(database: request.db, services: request.services).reach(of: entry.patient)
        let reachText: String
        if reach.byPush {
            reachText = localizer.text("console.notifications.reachPush", language, ["count": String(reach.webPush + reach.apns)])
        } else {
            reachText = localizer.text(reach.email ? "console.notifications.reachEmail" : "console.notifications.reachNone", language)
        }
        let sent = try await NotificationHistory(database: request.db, services: request.services).recent(of: patientID, limit: 20)
        if !sent.isEmpty { try await audit.record(actor: therapist, action: .notificationsRead, patients: [patientID]) }
        let notificationRows = sent.map { record in
            NotificationRow(
                title: record.title, due: display.dateTime(record.dueAt), status: record.status,
                statusLabel: localizer.text("notificationStatus.\(record.status)", language), channel: record.channel ?? "",
                receipt: record.receipt ?? "")
        }
        return try await request.renderConsole(
            "console/patient", titleKey: "console.patient.title",
            content: PatientContent(
                id: patientID.uuidString, pseudonym: entry.profile.pseudonym, name: entry.patient.name,
                dateOfBirth: entry.profile.dateOfBirth ?? "",
                gender: entry.profile.gender.map { localizer.text("gender.\($0)", language) } ?? "",
                pairedSince: display.date(entry.enrollment.createdAt),
                lastActivity: display.dateTime(entry.patient.lastActiveAt), instruments: instruments,
                opensAt: form?.opensAt ?? LocalDateTime(now, in: zone).description,
                closesAt: form?.closesAt ?? LocalDateTime(now.addingTimeInterval(7 * 24 * 3600), in: zone).description,
                assigned: assigned, errors: errors, prompts: promptRows, hasPrompts: !promptRows.isEmpty,
                results: sections, hasResults: !sections.isEmpty,
                upcoming: allPrompts.count - prompts.count,
                compliance: ComplianceCell(compliance ?? PromptService.Compliance()),
                practiceID: practiceID.uuidString, plans: plans, hasPlans: !plans.isEmpty,
                planAdded: request.query[String.self, at: "planAdded"] != nil,
                appointments: appointmentRows, hasAppointments: !appointmentRows.isEmpty, showPastAppointments: showPast,
                appointmentForm: appointment
                    ?? AppointmentForm(title: "", date: today.adding(days: 7).description, startTime: "", endTime: ""),
                appointmentAdded: appointmentAdded, appointmentErrors: appointmentErrors, timeZone: patientZone.identifier,
                reach: reachText, notifications: notificationRows, hasNotifications: !notificationRows.isEmpty),
            status: status)
    }

    /// Adds an appointment for the patient; date and times are the patient's local time.
    func addAppointment(_ request: Request) async throws -> Response {
        let therapist = try request.consoleUser(.therapist)
        guard let patientID = request.parameters.get("patientID", as: UUID.self) else { throw AppError.notFound }
        let entry = try await Caseloads(database: request.db).patient(patientID, of: therapist.requireID())
        let form = try request.content.decode(AppointmentForm.self)
        let zone = entry.patient.zone
        do {
            var validator = FieldValidator()
            let date = LocalDate(form.date)
            let start = LocalTime(form.startTime)
            let end = LocalTime(form.endTime)
            if date == nil { validator.add("date", form.date.isEmpty ? .required : .invalidFormat) }
            if start == nil { validator.add("startsAt", form.startTime.isEmpty ? .required : .invalidFormat) }
            if end == nil { validator.add("endsAt", form.endTime.isEmpty ? .required : .invalidFormat) }
            try validator.check()
            _ = try await AppointmentService(database: request.db, services: request.services).create(
                for: entry.patient, by: therapist, title: form.title,
                startsAt: LocalDateTime(date: date!, time: start!).instant(in: zone),
                endsAt: LocalDateTime(date: date!, time: end!).instant(in: zone), comment: form.comment)
            try await AuditLog(database: request.db, now: request.services.clock.now)
                .record(actor: therapist, action: .appointmentAdded, patients: [patientID])
            return try await renderPatient(request, appointmentAdded: true, status: .created)
        } catch {
            guard let errors = FormErrors.from(error, request: request) else { throw error }
            return try await renderPatient(request, appointment: form, appointmentErrors: errors, status: errors.status)
        }
    }

    /// Assigns a questionnaire from the patient's page; times are read in the therapist's time zone.
    func assign(_ request: Request) async throws -> Response {
        let therapist = try request.consoleUser(.therapist)
        guard let patientID = request.parameters.get("patientID", as: UUID.self) else { throw AppError.notFound }
        let form = try request.content.decode(AssignForm.self)
        let zone = TimeZone(identifier: therapist.timeZone) ?? .gmt
        do {
            var validator = FieldValidator()
            let opens = LocalDateTime(form.opensAt)
            let closes = LocalDateTime(form.closesAt)
            if opens == nil { validator.add("opensAt", .invalidFormat) }
            if closes == nil { validator.add("closesAt", .invalidFormat) }
            try validator.check()
            let now = request.services.clock.now
            let prompt = try await PromptService(database: request.db, now: now).assign(
                by: therapist, patientID: patientID, instrumentKey: form.instrumentKey,
                opensAt: opens!.instant(in: zone), closesAt: closes!.instant(in: zone))
            try await AuditLog(database: request.db, now: now).record(
                actor: therapist, action: .promptAssigned, patients: [patientID],
                target: "instrument:\(prompt.instrumentKey)")
            return try await renderPatient(request, assigned: true, status: .created)
        } catch {
            guard let errors = FormErrors.from(error, request: request) else { throw error }
            return try await renderPatient(request, form: form, errors: errors, status: errors.status)
        }
    }

    /// One response's answers in the instrument's order.
    func response(_ request: Request) async throws -> Response {
        let (therapist, patientID, stored, definition) = try await loadResponse(request)
        let entry = try await Caseloads(database: request.db).patient(patientID, of: therapist.requireID())
        let display = therapist.dateDisplay
        let results = PatientResults(
            language: therapist.language, display: display, localizer: request.services.localizer)
        return try await request.renderConsole(
            "console/response", titleKey: "console.response.title",
            content: ResponseContent(
                patientID: patientID.uuidString, pseudonym: entry.profile.pseudonym,
                title: definition.title.text(therapist.language), completedAt: display.dateTime(stored.record.completedAt),
                receivedAt: display.dateTime(stored.record.receivedAt),
                scores: results.sections([stored], definitions: [
                    InstrumentVersionKey(key: definition.key, version: definition.version): definition
                ]).first?.submissions.first?.scores ?? [],
                answers: results.answers(stored, definition: definition),
                fhirLink: "/console/patients/\(patientID.uuidString)/responses/\(stored.record.id!.uuidString)/fhir"))
    }

    /// The response as a FHIR R4 QuestionnaireResponse file.
    func responseFHIR(_ request: Request) async throws -> Response {
        let (_, patientID, stored, definition) = try await loadResponse(request)
        let settings = request.services.settings
        let pseudonym = try await PatientProfileRecord.query(on: request.db).filter(\.$user.$id == patientID).first()?.pseudonym
        let resource = definition.fhirResponse(
            id: stored.record.id!.uuidString.lowercased(), answers: stored.answers,
            questionnaireURL: settings.questionnaireURL(definition.key), authored: stored.record.completedAt,
            subject: pseudonym.map { FHIR.Identifier(system: settings.publicURL + "/pseudonym", value: $0) })
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        var headers = HTTPHeaders()
        headers.contentType = HTTPMediaType(type: "application", subType: "fhir+json", parameters: ["charset": "utf-8"])
        headers.replaceOrAdd(
            name: .contentDisposition, value: "attachment; filename=\"QuestionnaireResponse-\(stored.record.id!.uuidString.lowercased()).json\"")
        return Response(status: .ok, headers: headers, body: .init(data: try encoder.encode(resource)))
    }

    /// The therapist, the patient and the response named in the path; not found for anyone else's patient.
    private func loadResponse(_ request: Request) async throws
        -> (UserRecord, UUID, ResponseService.Stored, InstrumentDefinition)
    {
        let therapist = try request.consoleUser(.therapist)
        guard let patientID = request.parameters.get("patientID", as: UUID.self),
            let responseID = request.parameters.get("responseID", as: UUID.self)
        else { throw AppError.notFound }
        _ = try await Caseloads(database: request.db).patient(patientID, of: therapist.requireID())
        let now = request.services.clock.now
        guard
            let stored = try await ResponseService(database: request.db, services: request.services).response(responseID),
            stored.record.$patient.id == patientID,
            let definition = try await InstrumentCatalog(database: request.db, now: now)
                .version(stored.record.instrumentKey, stored.record.instrumentVersion)?.decodedDefinition()
        else { throw AppError.notFound }
        try await AuditLog(database: request.db, now: now).record(
            actor: therapist, action: .responsesRead, patients: [patientID], target: "response:\(responseID)")
        return (therapist, patientID, stored, definition)
    }

    private func renderCodes(
        _ request: Request, fresh: Set<UUID> = [], note: String = "", errors: FormErrors = FormErrors(),
        status: HTTPResponseStatus = .ok
    ) async throws -> Response {
        let therapist = try request.consoleUser(.therapist)
        let display = therapist.dateDisplay
        let now = request.services.clock.now
        let localizer = request.services.localizer
        let codes = try await PairingService(database: request.db, services: request.services).codes(of: therapist)
        let rows = try codes.map { code in
            let status = PairingCodeStatus.of(expiresAt: code.expiresAt, redeemedAt: code.redeemedAt, now: now)
            return CodeRow(
                id: try code.requireID().uuidString, code: PairingCode(code.code)?.grouped ?? code.code,
                note: code.note ?? "", status: status.rawValue,
                statusLabel: localizer.text("pairingCode.status.\(status.rawValue)", therapist.language),
                createdAt: display.dateTime(code.createdAt), expiresAt: display.date(code.expiresAt),
                redeemedAt: display.dateTime(code.redeemedAt), fresh: fresh.contains(try code.requireID()))
        }
        return try await request.renderConsole(
            "console/pairing-codes", titleKey: "console.pairingCodes.title",
            content: CodesContent(codes: rows, hasCodes: !rows.isEmpty, errors: errors, note: note), status: status)
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

    /// A print-ready sheet of the chosen open codes (`?id=…&id=…`), or of every open code.
    func sheet(_ request: Request) async throws -> Response {
        let therapist = try request.consoleUser(.therapist)
        let wanted = Set(((try? request.query.get([String].self, at: "id")) ?? []).compactMap(UUID.init(uuidString:)))
        let now = request.services.clock.now
        let display = therapist.dateDisplay
        let codes = try await PairingService(database: request.db, services: request.services).codes(of: therapist)
            .filter { PairingCodeStatus.of(expiresAt: $0.expiresAt, redeemedAt: $0.redeemedAt, now: now) == .open }
            .filter { wanted.isEmpty || wanted.contains($0.id!) }
        guard !codes.isEmpty else { throw AppError.notFound }
        let (profile, _) = try await TherapistProfiles(database: request.db).profile(of: therapist.requireID())
        return try await request.renderConsole(
            "console/code-sheet", titleKey: "console.codeSheet.title",
            content: SheetContent(
                codes: codes.map {
                    SheetCode(code: PairingCode($0.code)?.grouped ?? $0.code, expiresAt: display.date($0.expiresAt))
                },
                appURL: request.services.settings.publicURL + "/app", therapistName: profile.fullName))
    }

    private func renderProfile(
        _ request: Request, form: ProfileForm?, saved: Bool = false, errors: FormErrors = FormErrors(),
        status: HTTPResponseStatus = .ok
    ) async throws -> Response {
        let therapist = try request.consoleUser(.therapist)
        let localizer = request.services.localizer
        var shown = form
        if shown == nil {
            let (profile, _) = try await TherapistProfiles(database: request.db).profile(of: therapist.requireID())
            shown = ProfileForm(
                fullName: profile.fullName, gender: profile.gender, officeAddress: profile.officeAddress,
                phone: profile.phone, emergencyNumber: profile.emergencyNumber)
        }
        let genders = Gender.allCases.map {
            SelectOption(
                value: $0.rawValue, label: localizer.text("gender.\($0.rawValue)", therapist.language),
                selected: shown?.gender == $0.rawValue)
        }
        return try await request.renderConsole(
            "console/profile", titleKey: "console.profile.title",
            content: ProfileContent(form: shown!, genders: genders, saved: saved, errors: errors), status: status)
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
            return request.redirect(to: "/console/profile?saved=1")
        } catch {
            guard let errors = FormErrors.from(error, request: request) else { throw error }
            return try await renderProfile(request, form: form, errors: errors, status: errors.status)
        }
    }
}
