import Fluent
import Foundation
import InterludeCore

/// What a patient's home shows: what is due now and next, the next appointment, what arrived unseen, and how the
/// week goes, read together so the home fills from one request.
struct TodayService: Sendable {
    let database: any Database
    let services: AppServices

    private var now: Date { services.clock.now }

    /// The questionnaires listed as due at most; the rest wait on the questionnaires page.
    static let dueShown = 5
    /// The unseen messages shown at most.
    static let messagesShown = 3
    /// How much of a message's first line is shown.
    static let firstLineLength = 140

    struct Today: Sendable {
        let situation: PatientSituation
        /// Open now, one-time ones first, then by deadline.
        let due: [PromptService.Current]
        let dueCount: Int
        let blocked: Set<UUID>
        let next: PromptService.Current?
        let appointment: AppointmentService.Shown?
        let messages: [InterventionService.Opened]
        let unseenMessages: Int
        let week: WeekProgress
    }

    func today(of patient: UserRecord) async throws -> Today {
        let patientID = try patient.requireID()
        let prompts = PromptService(database: database, services: services)
        let open = try await prompts.prompts(of: patientID, statuses: [.open])
        let due = Array(open.prefix(Self.dueShown))
        let next = try await PromptRecord.query(on: database)
            .filter(\.$patient.$id == patientID)
            .filter(\.$opensAt > now)
            .filter(\.$status ~~ [PromptStatus.scheduled, .open])
            .sort(\.$opensAt)
            .first()
            .map(prompts.current)
        let appointment = try await AppointmentService(database: database, services: services)
            .appointments(of: patientID, includePast: false).first
        let unseen = try await InterventionService(database: database, services: services)
            .unseen(by: patientID, limit: Self.messagesShown)
        return Today(
            situation: try await situation(of: patientID), due: due, dueCount: open.count,
            blocked: try await prompts.blocked(among: due, patientID: patientID), next: next, appointment: appointment,
            messages: unseen.newest, unseenMessages: unseen.count, week: try await week(of: patient))
    }

    /// Whether the patient is in a practice, in a research study, both or neither.
    private func situation(of patientID: UUID) async throws -> PatientSituation {
        let studyIDs = try await EnrollmentRecord.query(on: database)
            .filter(\.$patient.$id == patientID)
            .filter(\.$status == .active)
            .all(\.$study.$id)
        guard !studyIDs.isEmpty else { return .neither }
        let joinModes = try await StudyRecord.query(on: database).filter(\.$id ~~ studyIDs).all(\.$joinMode)
        let kinds = Set(joinModes.map(StudyKind.init(joinMode:)))
        return PatientSituation(inPractice: kinds.contains(.practice), inStudy: kinds.contains(.research))
    }

    private func week(of patient: UserRecord) async throws -> WeekProgress {
        let zone = patient.zone
        let monday = WeekProgress.start(of: now, in: zone)
        let from = LocalDateTime(date: monday, hour: 0, minute: 0)!.instant(in: zone)
        let until = LocalDateTime(date: monday.adding(days: 7), hour: 0, minute: 0)!.instant(in: zone)
        let records = try await PromptRecord.query(on: database)
            .filter(\.$patient.$id == patient.requireID())
            .filter(\.$opensAt >= from).filter(\.$opensAt < until)
            .all()
        let prompts = PromptService(database: database, services: services)
        return WeekProgress(prompts: records.map { ($0.opensAt, prompts.current($0).status) }, now: now, zone: zone)
    }
}
