import Fluent
import Foundation
import InterludeCore

/// The therapist's own practice pages, built without a request: pairing codes, their print sheet, the profile
/// patients see.
struct PracticePages: Sendable {
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
        var invitation: InvitationCard
    }

    /// The form that invites a client by email: what was typed, to whom an invitation just went, what was wrong.
    struct InvitationCard: Encodable, Sendable {
        var email = ""
        var languages: [SelectOption] = []
        var sentTo: String?
        var errors = FormErrors()
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

    struct ProfileContent: Encodable, Sendable {
        var form: ConsoleTherapistController.ProfileForm
        var genders: [SelectOption]
        var saved: Bool
        var errors: FormErrors
    }

    let therapist: UserRecord
    let database: any Database
    let services: AppServices

    private var localizer: Localizer { services.localizer }

    /// The therapist's codes, newest first; `fresh` marks those just created.
    func codes(fresh: Set<UUID>, note: String, errors: FormErrors, invitation: InvitationCard) async throws
        -> CodesContent
    {
        let display = therapist.dateDisplay
        let now = services.clock.now
        let codes = try await PairingService(database: database, services: services).codes(of: therapist)
        let rows = try codes.map { code in
            let status = PairingCodeStatus.of(expiresAt: code.expiresAt, redeemedAt: code.redeemedAt, now: now)
            return CodeRow(
                id: try code.requireID().uuidString, code: PairingCode(code.code)?.grouped ?? code.code,
                note: code.note ?? "", status: status.rawValue,
                statusLabel: localizer.text("pairingCode.status.\(status.rawValue)", therapist.language),
                createdAt: display.dateTime(code.createdAt), expiresAt: display.date(code.expiresAt),
                redeemedAt: display.dateTime(code.redeemedAt), fresh: fresh.contains(try code.requireID()))
        }
        var card = invitation
        card.languages = Language.allCases.map {
            SelectOption(
                value: $0.rawValue, label: localizer.text("language.\($0.rawValue)", therapist.language),
                selected: $0 == therapist.language)
        }
        return CodesContent(codes: rows, hasCodes: !rows.isEmpty, errors: errors, note: note, invitation: card)
    }

    /// A print-ready sheet of the chosen open codes, or of every open code when none is chosen.
    func sheet(of wanted: Set<UUID>) async throws -> SheetContent {
        let now = services.clock.now
        let display = therapist.dateDisplay
        let codes = try await PairingService(database: database, services: services).codes(of: therapist)
            .filter { PairingCodeStatus.of(expiresAt: $0.expiresAt, redeemedAt: $0.redeemedAt, now: now) == .open }
            .filter { code in wanted.isEmpty || code.id.map(wanted.contains) == true }
        guard !codes.isEmpty else { throw AppError.notFound }
        let (profile, _) = try await TherapistProfiles(database: database).profile(of: therapist.requireID())
        return SheetContent(
            codes: codes.map {
                SheetCode(code: PairingCode($0.code)?.grouped ?? $0.code, expiresAt: display.date($0.expiresAt))
            },
            appURL: services.settings.publicURL + "/app", therapistName: profile.fullName)
    }

    /// The profile form: what was sent when it is shown again, else what is stored.
    func profile(form: ConsoleTherapistController.ProfileForm?, saved: Bool, errors: FormErrors) async throws
        -> ProfileContent
    {
        let shown: ConsoleTherapistController.ProfileForm
        if let form {
            shown = form
        } else {
            let (profile, _) = try await TherapistProfiles(database: database).profile(of: therapist.requireID())
            shown = .init(
                fullName: profile.fullName, gender: profile.gender, officeAddress: profile.officeAddress,
                phone: profile.phone, emergencyNumber: profile.emergencyNumber)
        }
        let genders = Gender.allCases.map {
            SelectOption(
                value: $0.rawValue, label: localizer.text("gender.\($0.rawValue)", therapist.language),
                selected: shown.gender == $0.rawValue)
        }
        return ProfileContent(form: shown, genders: genders, saved: saved, errors: errors)
    }
}
