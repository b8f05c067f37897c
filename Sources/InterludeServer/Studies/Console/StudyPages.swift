import Fluent
import Foundation
import InterludeCore

/// The console's study pages, built from a grant or the viewer's standing without a request: the list, a study
/// with its requests and participants, and the study form.
struct StudyPages: Sendable {
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

    struct FormContent: Encodable, Sendable {
        var action: String
        var isNew: Bool
        var form: ConsoleStudiesController.StudyForm
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
        var canViewTeam: Bool
        var canViewParticipants: Bool
        var teamLink: String
        var requests: [ParticipantRow]
        var hasRequests: Bool
        var participants: [ParticipantRow]
        var hasParticipants: Bool
        var saved: Bool
    }

    let viewer: UserRecord
    let database: any Database
    let services: AppServices

    private var language: Language { viewer.language }
    private var localizer: Localizer { services.localizer }

    func list() async throws -> StudiesContent {
        let access = StudyAccess(database: database, services: services)
        let studies = try await access.studies(where: .viewStudy, for: viewer, kind: .research)
        let deciding = try await access.studies(where: .decideEnrollment, for: viewer, kind: .research)
        let rows = try studies.map { study in
            StudyRow(
                id: try study.requireID().uuidString, title: study.title,
                joinMode: localizer.text("joinMode.\(study.joinMode.rawValue)", language), status: study.status.rawValue,
                statusLabel: localizer.text("studyStatus.\(study.status.rawValue)", language))
        }
        return StudiesContent(
            studies: rows, hasStudies: !rows.isEmpty, canCreate: viewer.role != .therapist,
            pendingRequests: try await StudyService(database: database, services: services).pendingRequestCount(in: deciding))
    }

    func form(
        action: ConsoleURL, form: ConsoleStudiesController.StudyForm, hasPassword: Bool, errors: FormErrors
    ) -> FormContent {
        let joinModes = [JoinMode.open, .password, .approval].map {
            SelectOption(
                value: $0.rawValue, label: localizer.text("joinMode.\($0.rawValue)", language),
                selected: form.joinMode == $0.rawValue)
        }
        let statuses = StudyStatus.allCases.map {
            SelectOption(
                value: $0.rawValue, label: localizer.text("studyStatus.\($0.rawValue)", language),
                selected: (form.status ?? StudyStatus.running.rawValue) == $0.rawValue)
        }
        return FormContent(
            action: action.path, isNew: action == .newStudy, form: form, joinModes: joinModes, statuses: statuses,
            hasPassword: hasPassword, errors: errors)
    }

    func study(_ grant: StudyGrant, saved: Bool) async throws -> StudyContent {
        let study = grant.study
        let enrolled =
            grant.allows(.viewParticipants) ? try await StudyService(database: database, services: services).participants(of: grant) : []
        let display = viewer.dateDisplay
        let compliance = try await PromptService(database: database, services: services)
            .compliance(of: enrolled.map { $0.enrollment.$patient.id }, studies: [grant.studyID])
        let rows = try enrolled.map { participant in
            ParticipantRow(
                enrollmentID: try participant.enrollment.requireID().uuidString,
                patientID: participant.enrollment.$patient.id.uuidString,
                compliance: .init(compliance[participant.enrollment.$patient.id] ?? PromptService.Compliance()),
                pseudonym: participant.pseudonym,
                status: participant.enrollment.status.rawValue,
                statusLabel: localizer.text("enrollmentStatus.\(participant.enrollment.status.rawValue)", language),
                since: display.date(participant.enrollment.createdAt))
        }
        let requests = rows.filter { $0.status == EnrollmentStatus.requested.rawValue }
        let participants = rows.filter { $0.status != EnrollmentStatus.requested.rawValue }
        return StudyContent(
            id: grant.studyID.uuidString, title: study.title, description: study.description,
            joinMode: localizer.text("joinMode.\(study.joinMode.rawValue)", language),
            statusLabel: localizer.text("studyStatus.\(study.status.rawValue)", language),
            consentVersion: study.consentVersion,
            canEdit: grant.allows(.editStudy), canDecide: grant.allows(.decideEnrollment),
            canViewTeam: grant.allows(.viewTeam), canViewParticipants: grant.allows(.viewParticipants),
            teamLink: ConsoleURL.team(study: grant.studyID).path,
            requests: requests, hasRequests: !requests.isEmpty,
            participants: participants, hasParticipants: !participants.isEmpty, saved: saved)
    }
}
