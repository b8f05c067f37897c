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
        var armRows: [ArmFields.Row]
        /// A problem with the arms, their shares, targets or control arms, shown beside the arms.
        var armsError: String?
    }

    struct ParticipantRow: Encodable, Sendable {
        var enrollmentID: String
        var patientID: String
        /// Absent for a research participant who does not share with research.
        var compliance: CaseloadPages.ComplianceCell?
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
        var canExport: Bool
        var exportsLink: String
        var canMonitor: Bool
        var monitorLink: String
        /// Where a research study's consent versions are kept; a practice has none.
        var consentLink: String?
        var requests: [ParticipantRow]
        var hasRequests: Bool
        var participants: [ParticipantRow]
        var hasParticipants: Bool
        var lowCompliance: [ParticipantRow]
        var hasLowCompliance: Bool
        var arms: [ArmRow]
        /// The arms' names as the strata table's columns, and its rows; empty for a design without factors.
        var armNames: [String]
        var strata: [StratumRow]
        /// How participants are allocated, for a study with arms.
        var allocation: String?
        /// Every arm has its target: the study takes nobody more.
        var full: Bool
        var complianceChart: String?
        var saved: Bool
    }

    /// How many take part in one arm (or the whole study, when it has no arms).
    struct ArmRow: Encodable, Sendable {
        var arm: String
        var active: Int
        var requested: Int
        var left: Int
        /// How many the design allocated to the arm, with its target when it has one ("12 of 20").
        var allocated: String
        /// A control arm: questionnaires only.
        var control: Bool
    }

    /// One stratum of the design's factors ("Female · 30 to 49") and its participants in each arm, in the order of
    /// the arms.
    struct StratumRow: Encodable, Sendable {
        var label: String
        var counts: [Int]
    }

    static let chartWeeks = 8

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
                id: try study.requireID().uuidString, title: study.titles.text(language),
                joinMode: localizer.text("joinMode.\(study.joinMode.rawValue)", language),
                status: study.status.rawValue,
                statusLabel: localizer.text("studyStatus.\(study.status.rawValue)", language))
        }
        return StudiesContent(
            studies: rows, hasStudies: !rows.isEmpty, canCreate: viewer.role != .therapist,
            pendingRequests: try await StudyService(database: database, services: services).pendingRequestCount(
                in: deciding))
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
            hasPassword: hasPassword, errors: errors.withLanguageFields, armRows: form.armFields.rows,
            armsError: ArmFields.error(in: errors))
    }

    func study(_ grant: StudyGrant, saved: Bool) async throws -> StudyContent {
        let study = grant.study
        let enrolled =
            grant.allows(.viewParticipants)
            ? try await StudyService(database: database, services: services).participants(of: grant) : []
        let display = viewer.dateDisplay
        // How a participant keeps up is their data: shown as the access table says.
        let visible = enrolled.filter {
            StudyAccessPolicy.seesData(of: $0.sharesWithResearch, as: grant.standing, in: grant.kind)
        }
        .map { $0.enrollment.$patient.id }
        let prompts = PromptService(database: database, services: services)
        let compliance = try await prompts.compliance(of: visible, studies: [grant.studyID])
        let rows = try enrolled.map { participant in
            ParticipantRow(
                enrollmentID: try participant.enrollment.requireID().uuidString,
                patientID: participant.enrollment.$patient.id.uuidString,
                compliance: compliance[participant.enrollment.$patient.id].map(CaseloadPages.ComplianceCell.init),
                pseudonym: participant.pseudonym,
                status: participant.enrollment.status.rawValue,
                statusLabel: localizer.text("enrollmentStatus.\(participant.enrollment.status.rawValue)", language),
                since: display.date(participant.enrollment.createdAt))
        }
        let requests = rows.filter { $0.status == EnrollmentStatus.requested.rawValue }
        let participants = rows.filter { $0.status != EnrollmentStatus.requested.rawValue }
        let low = enrolled.filter {
            $0.enrollment.status == .active && compliance[$0.enrollment.$patient.id]?.isLow == true
        }
        .map { $0.enrollment.$patient.id.uuidString }
        let design = StudyArms.design(of: study)
        let log = try await StudyAllocations(database: database, services: services).log(of: grant.studyID)
        var allocated: [String: Int] = [:]
        for arm in AllocationDesign.currentArms(log).values { allocated[arm, default: 0] += 1 }
        let weekly =
            visible.isEmpty
            ? [] : try await prompts.weeklyCompliance(of: visible, in: grant.studyID, weeks: Self.chartWeeks)
        return StudyContent(
            id: grant.studyID.uuidString, title: study.titles.text(language),
            description: study.descriptions.text(language),
            joinMode: localizer.text("joinMode.\(study.joinMode.rawValue)", language),
            statusLabel: localizer.text("studyStatus.\(study.status.rawValue)", language),
            consentVersion: study.consentVersion,
            canEdit: grant.allows(.editStudy), canDecide: grant.allows(.decideEnrollment),
            canViewTeam: grant.allows(.viewTeam), canViewParticipants: grant.allows(.viewParticipants),
            teamLink: ConsoleURL.team(study: grant.studyID).path,
            canExport: grant.allows(.exportData), exportsLink: ConsoleURL.exports(study: grant.studyID).path,
            canMonitor: grant.allows(.readParticipantData),
            monitorLink: ConsoleURL.monitor(study: grant.studyID).path,
            consentLink: grant.kind == .research ? ConsoleURL.consent(study: grant.studyID).path : nil,
            requests: requests, hasRequests: !requests.isEmpty,
            participants: participants, hasParticipants: !participants.isEmpty,
            lowCompliance: participants.filter { low.contains($0.patientID) },
            hasLowCompliance: participants.contains { low.contains($0.patientID) },
            arms: grant.allows(.viewParticipants) ? arms(of: study, enrolled, allocated: allocated) : [],
            armNames: StudyArms.names(of: study),
            strata: grant.allows(.viewParticipants) ? strata(of: design, log) : [],
            allocation: study.allocation.map { localizer.text("allocation.\($0.rawValue)", language) },
            full: design?.isFull(after: log) ?? false,
            complianceChart: chart(weekly), saved: saved)
    }

    private func arms(of study: StudyRecord, _ enrolled: [StudyService.Participant], allocated: [String: Int])
        -> [ArmRow]
    {
        let names = StudyArms.names(of: study)
        let design = StudyArms.design(of: study)
        let targets = Dictionary(
            (design?.arms ?? []).map { ($0.name, $0.target) }, uniquingKeysWith: { first, _ in first })
        let groups: [String?] = names.isEmpty ? [nil] : names
        return groups.map { arm in
            let members = enrolled.filter { names.isEmpty || $0.enrollment.arm == arm }
            let count = arm.map { allocated[$0, default: 0] } ?? members.count
            return ArmRow(
                arm: arm ?? localizer.text("console.study.allParticipants", language),
                active: members.filter { $0.enrollment.status == .active }.count,
                requested: members.filter { $0.enrollment.status == .requested }.count,
                left: members.filter { [.withdrawn, .ended].contains($0.enrollment.status) }.count,
                allocated: (arm.flatMap { targets[$0] ?? nil }).map {
                    localizer.text("console.study.ofTarget", language, ["count": String(count), "target": String($0)])
                } ?? String(count),
                control: design?.isControl(arm) ?? false)
        }
    }

    /// Each stratum's allocations per arm as the log has them now, for a design with factors.
    private func strata(of design: AllocationDesign?, _ log: [AllocationEntry]) -> [StratumRow] {
        guard let design, !design.factors.isEmpty else { return [] }
        return AllocationDesign.strata(log, factors: design.factors).map { stratum in
            let labels = zip(design.factors, stratum.levels).map { factor, level in
                level == "unknown"
                    ? localizer.text("console.study.levelUnknown", language)
                    : factor == AllocationFactor.gender.rawValue
                        ? localizer.text("gender.\(level)", language)
                        : localizer.text("console.study.ageGroup.\(level)", language)
            }
            return StratumRow(
                label: labels.joined(separator: " · "), counts: design.arms.map { stratum.arms[$0.name, default: 0] })
        }
    }

    /// The share of prompts answered week by week, as an accessible chart; nil before any prompt was due.
    private func chart(_ weekly: [(end: Date, compliance: PromptService.Compliance)]) -> String? {
        let points = weekly.compactMap { week in
            week.compliance.percent.map { ScoreChart.Point(date: week.end, value: Double($0)) }
        }
        guard !points.isEmpty else { return nil }
        return ScoreChart(
            title: localizer.text("console.study.complianceChart", language, ["weeks": String(Self.chartWeeks)]),
            points: points,
            bands: [], range: 0...100, resolution: 1, display: viewer.dateDisplay, language: language,
            id: "compliance-chart"
        ).svg
    }
}
