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
    }

    struct CaseloadContent: Encodable, Sendable {
        var patients: [PatientRow]
        var hasPatients: Bool
        var passwordChanged: Bool
    }

    struct PatientContent: Encodable, Sendable {
        var pseudonym: String
        var name: String?
        var dateOfBirth: String
        var gender: String
        var pairedSince: String
        var lastActivity: String
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
        let rows = try entries.map { entry in
            PatientRow(
                id: try entry.patient.requireID().uuidString, pseudonym: entry.profile.pseudonym,
                name: entry.patient.name ?? "", pairedSince: display.date(entry.enrollment.createdAt),
                lastActivity: display.dateTime(entry.patient.lastActiveAt))
        }
        return try await request.renderConsole(
            "console/patients", titleKey: "console.patients.title",
            content: CaseloadContent(
                patients: rows, hasPatients: !rows.isEmpty, passwordChanged: (try? request.query.get(String.self, at: "passwordChanged")) != nil))
    }

    func patient(_ request: Request) async throws -> Response {
        let therapist = try request.consoleUser(.therapist)
        guard let patientID = request.parameters.get("patientID", as: UUID.self) else { throw AppError.notFound }
        let entry = try await Caseloads(database: request.db).patient(patientID, of: therapist.requireID())
        try await AuditLog(database: request.db, now: request.services.clock.now)
            .record(actor: therapist, action: .patientRead, patients: [patientID])
        let display = therapist.dateDisplay
        let localizer = request.services.localizer
        return try await request.renderConsole(
            "console/patient", titleKey: "console.patient.title",
            content: PatientContent(
                pseudonym: entry.profile.pseudonym, name: entry.patient.name,
                dateOfBirth: entry.profile.dateOfBirth ?? "",
                gender: entry.profile.gender.map { localizer.text("gender.\($0)", therapist.language) } ?? "",
                pairedSince: display.date(entry.enrollment.createdAt),
                lastActivity: display.dateTime(entry.patient.lastActiveAt)))
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
