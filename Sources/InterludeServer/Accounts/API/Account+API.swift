import Fluent
import Foundation
import InterludeCore

extension Components.Schemas.User {
    /// The account as its owner sees it, with the patient profile when there is one.
    static func load(_ user: UserRecord, on database: any Database) async throws -> Self {
        let userID = try user.requireID()
        var patient: Components.Schemas.PatientProfile?
        let caseloads = Caseloads(database: database)
        if user.role == .patient, let profile = try await caseloads.profile(of: userID) {
            let pairing = try await caseloads.practiceEnrollment(of: userID)
            patient = .init(
                pseudonym: profile.pseudonym, shareWithResearch: profile.shareWithResearch, paired: pairing != nil,
                dateOfBirth: profile.dateOfBirth, gender: profile.gender.flatMap(Components.Schemas.Gender.init),
                pairedSince: pairing?.createdAt, therapyStart: profile.therapyStart, therapyEnd: profile.therapyEnd,
                records: .init(try await RecordSettings.ofStudies(of: userID, on: database)),
                hidesComparison: profile.hidesComparison, sharesContextWithTherapist: profile.sharesContextWithTherapist
            )
        }
        return .init(
            id: userID.lowercasedText, email: user.email,
            role: Components.Schemas.Role(rawValue: user.role.rawValue) ?? .patient, name: user.name,
            locale: Components.Schemas.Locale(rawValue: user.locale) ?? .en, timeZone: user.timeZone,
            emailVerified: user.emailVerifiedAt != nil, mustChangePassword: user.mustChangePassword,
            createdAt: user.createdAt, patient: patient)
    }
}

extension Components.Schemas.StaffUser {
    init(_ user: UserRecord) throws {
        self.init(
            id: try user.requireID().lowercasedText, email: user.email,
            role: Components.Schemas.Role(rawValue: user.role.rawValue) ?? .therapist, name: user.name,
            active: user.deactivatedAt == nil, createdAt: user.createdAt)
    }
}

extension Components.Schemas.TherapistProfile {
    init(_ profile: TherapistProfileRecord, user: UserRecord) throws {
        self.init(try TherapistProfiles.Contact(profile, user: user))
    }

    init(_ contact: TherapistProfiles.Contact) {
        self.init(
            id: contact.therapistID.lowercasedText, fullName: contact.fullName,
            gender: contact.gender.flatMap(Components.Schemas.Gender.init), email: contact.email,
            officeAddress: contact.officeAddress, phone: contact.phone, emergencyNumber: contact.emergencyNumber)
    }
}

extension Components.Schemas.PairingCode {
    init(_ record: PairingCodeRecord, now: Date) throws {
        let status = PairingCodeStatus.of(expiresAt: record.expiresAt, redeemedAt: record.redeemedAt, now: now)
        self.init(
            id: try record.requireID().lowercasedText, code: record.code, note: record.note,
            status: StatusPayload(rawValue: status.rawValue) ?? .open, createdAt: record.createdAt,
            expiresAt: record.expiresAt, redeemedAt: record.redeemedAt)
    }
}

extension Components.Schemas.CaseloadPatient {
    /// With the last activity the caseload worked out (answers count too), when it did.
    init(_ entry: Caseloads.Entry, lastActivityAt: Date? = nil) throws {
        self.init(
            id: try entry.patient.requireID().lowercasedText, pseudonym: entry.profile.pseudonym,
            name: entry.patient.name, email: entry.patient.email,
            status: Components.Schemas.TreatmentStatus(rawValue: entry.enrollment.treatmentStatus.rawValue)!,
            pairedSince: entry.enrollment.createdAt,
            lastActivityAt: lastActivityAt ?? entry.patient.lastActiveAt, dateOfBirth: entry.profile.dateOfBirth,
            gender: entry.profile.gender.flatMap(Components.Schemas.Gender.init),
            displayName: entry.enrollment.displayName,
            therapyStart: entry.profile.therapyStart, therapyEnd: entry.profile.therapyEnd)
    }
}

extension Components.Schemas.Study {
    /// `consent` is the version in force, for a patient deciding whether to join. Staff see how participants are
    /// allocated, never the seed.
    init(
        _ study: StudyRecord, enrollment: EnrollmentRecord?, consent: ConsentVersionRecord? = nil, staff: Bool = false
    ) throws {
        let design = staff ? StudyArms.design(of: study) : nil
        let modules = consent?.offeredModules ?? []
        self.init(
            id: try study.requireID().lowercasedText, title: study.title, titles: .init(study.titles),
            description: study.description, descriptions: .init(study.descriptions),
            joinMode: Components.Schemas.JoinMode(rawValue: study.joinMode.rawValue) ?? .open,
            status: Components.Schemas.StudyStatus(rawValue: study.status.rawValue) ?? .closed,
            consentText: study.consentText, consentTexts: consent.map { .init($0.localizedTexts) },
            consentVersion: study.consentVersion,
            consentModules: modules.isEmpty ? nil : modules.map { .init(rawValue: $0.rawValue)! },
            arms: StudyArms.names(of: study).isEmpty ? nil : StudyArms.names(of: study),
            allocation: design == nil ? nil : study.allocation.flatMap { .init(rawValue: $0.rawValue) },
            allocationSettings: design.map { .init(AllocationSettings($0)) },
            asksDemographics: study.asksDemographics, comparison: .init(rawValue: study.comparison.rawValue),
            retentionDays: study.retentionDays, closedAt: study.closedAt,
            enrollment: try enrollment.map(Components.Schemas.Enrollment.init))
    }
}

extension Components.Schemas.Enrollment {
    init(_ enrollment: EnrollmentRecord) throws {
        self.init(
            id: try enrollment.requireID().lowercasedText,
            studyId: enrollment.$study.id.lowercasedText,
            status: Components.Schemas.EnrollmentStatus(rawValue: enrollment.status.rawValue) ?? .active,
            createdAt: enrollment.createdAt)
    }
}

extension Components.Schemas.Participant {
    init(_ participant: StudyService.Participant) throws {
        self.init(
            enrollmentId: try participant.enrollment.requireID().lowercasedText,
            pseudonym: participant.pseudonym,
            status: Components.Schemas.EnrollmentStatus(rawValue: participant.enrollment.status.rawValue) ?? .active,
            createdAt: participant.enrollment.createdAt)
    }
}
