import Fluent
import Foundation
import InterludeCore

/// A therapist's caseload: their patients, current and past, with how each keeps up in the practice and the alerts
/// that wait, found, ordered and paged as the therapist asks. Reading a page is one audited read of every patient
/// on it.
struct CaseloadView: Sendable {
    struct Row: Sendable {
        let entry: Caseloads.Entry
        let facts: CaseloadFacts
        let compliance: PromptService.Compliance
    }

    static func read(
        for therapist: UserRecord, query: CaseloadQuery = CaseloadQuery(),
        page: PageRequest = PageRequest.all, database: any Database, services: AppServices
    ) async throws -> ListPage<Row> {
        guard therapist.role == .therapist else { throw AppError.forbidden(.notAllowed) }
        let zone = therapist.zone
        let caseload = try await Caseloads(database: database).caseload(of: therapist.requireID(), includingEnded: true)
        let answered = try await lastAnswers(of: caseload.map { $0.enrollment.$patient.id }, database: database)
        let alerts = try await AlertInbox(staff: therapist, database: database, services: services).openCounts()
        let entries =
            caseload
            .map { entry in
                let id = entry.enrollment.$patient.id
                return (entry: entry, facts: entry.facts(lastAnswerAt: answered[id], alerts: alerts[id] ?? (0, 0)))
            }
            .filter { query.includes($0.facts, activityDay: $0.facts.lastActivityAt.map { LocalDate($0, in: zone) }) }
        let listed = ListPage(
            of: entries, page, key: { query.sortKey(of: $0.facts) }, id: { $0.entry.enrollment.$patient.id },
            descending: query.descending)
        let patients = listed.items.map { $0.entry.enrollment.$patient.id }
        try await AuditLog(database: database, services: services).record(
            actor: therapist, action: .caseloadRead, patients: patients)
        let ended = Dictionary(
            listed.items.compactMap { item in
                item.entry.enrollment.treatmentEnd.map { (item.entry.enrollment.$patient.id, $0) }
            },
            uniquingKeysWith: { first, _ in first })
        let compliance = try await PromptService(database: database, services: services)
            .compliance(of: patients, studies: Set(listed.items.map { $0.entry.enrollment.$study.id }), until: ended)
        return listed.map { item in
            Row(
                entry: item.entry, facts: item.facts,
                compliance: compliance[item.entry.enrollment.$patient.id] ?? PromptService.Compliance())
        }
    }

    /// When each patient last sent an answer, however the app was used.
    private static func lastAnswers(of patients: [UUID], database: any Database) async throws -> [UUID: Date] {
        try await Statements.lastAnswers(of: patients, on: database)
    }
}

extension CaseloadView {
    /// Writes down that the therapist invited someone by email to join their caseload; the address stays out of the log.
    static func recordInvitation(by therapist: UserRecord, database: any Database, services: AppServices) async throws {
        try await AuditLog(database: database, services: services).record(
            actor: therapist, action: .invitationSent, target: nil)
    }
}

extension Caseloads.Entry {
    /// What the client is found and ordered by in the caseload: the last activity is the later of the last use of
    /// the app and the last answer sent, and never after the treatment ended.
    func facts(lastAnswerAt: Date?, alerts: (high: Int, all: Int)) -> CaseloadFacts {
        CaseloadFacts(
            shownName: enrollment.displayName ?? patient.name ?? "", pseudonym: profile.pseudonym, email: patient.email,
            lastActivityAt: Self.lastActivity(
                app: patient.lastActiveAt, answer: lastAnswerAt, end: enrollment.treatmentEnd),
            pairedSince: enrollment.createdAt,
            therapyStart: profile.therapyStart.flatMap(LocalDate.init), status: enrollment.treatmentStatus,
            highAlerts: alerts.high, openAlerts: alerts.all)
    }

    /// The later of the last use of the app and the last answer sent, never after the treatment's end.
    static func lastActivity(app: Date?, answer: Date?, end: Date?) -> Date? {
        let active = [app, answer].compactMap { $0 }.max()
        return active.map { active in end.map { min(active, $0) } ?? active }
    }
}
