import Fluent
import Foundation
import InterludeCore

/// A therapist's caseload: their patients, current and past, with how each keeps up in the practice and the alerts
/// that wait, found, ordered and paged as the therapist asks. Reading a page is one audited read of every patient
/// on it.
struct CaseloadView: Sendable {
    struct Row: Sendable {
        let entry: Caseloads.Entry
        let compliance: PromptService.Compliance
        let openAlerts: Int
    }

    static func read(
        for therapist: UserRecord, query: CaseloadQuery = CaseloadQuery(),
        page: PageRequest = PageRequest.all, database: any Database, services: AppServices
    ) async throws -> ListPage<Row> {
        guard therapist.role == .therapist else { throw AppError.forbidden(.notAllowed) }
        let zone = therapist.zone
        let entries = try await Caseloads(database: database).caseload(of: therapist.requireID(), includingEnded: true)
            .map { (entry: $0, facts: $0.facts) }
            .filter { query.includes($0.facts, activityDay: $0.facts.lastActivityAt.map { LocalDate($0, in: zone) }) }
        let listed = ListPage(
            of: entries, page, key: { query.sortKey(of: $0.facts) }, id: { $0.entry.enrollment.$patient.id },
            descending: query.descending)
        let patients = listed.items.map { $0.entry.enrollment.$patient.id }
        try await AuditLog(database: database, services: services).record(actor: therapist, action: .caseloadRead, patients: patients)
        let ended = Dictionary(
            listed.items.compactMap { item in item.entry.enrollment.treatmentEnd.map { (item.entry.enrollment.$patient.id, $0) } },
            uniquingKeysWith: { first, _ in first })
        let compliance = try await PromptService(database: database, services: services)
            .compliance(of: patients, studies: Set(listed.items.map { $0.entry.enrollment.$study.id }), until: ended)
        let alerts = try await AlertInbox(staff: therapist, database: database, services: services).openCounts()
        return listed.map { item in
            let id = item.entry.enrollment.$patient.id
            return Row(entry: item.entry, compliance: compliance[id] ?? PromptService.Compliance(), openAlerts: alerts[id] ?? 0)
        }
    }
}

extension CaseloadView {
    /// Writes down that the therapist invited someone by email to join their caseload; the address stays out of the log.
    static func recordInvitation(by therapist: UserRecord, database: any Database, services: AppServices) async throws {
        try await AuditLog(database: database, services: services).record(actor: therapist, action: .invitationSent, target: nil)
    }
}

extension Caseloads.Entry {
    /// What the client is found and ordered by in the caseload.
    var facts: CaseloadFacts {
        CaseloadFacts(
            shownName: enrollment.displayName ?? patient.name ?? "", pseudonym: profile.pseudonym, email: patient.email,
            lastActivityAt: patient.lastActiveAt.map { active in enrollment.treatmentEnd.map { min(active, $0) } ?? active },
            pairedSince: enrollment.createdAt,
            therapyStart: profile.therapyStart.flatMap(LocalDate.init), status: enrollment.treatmentStatus)
    }
}
