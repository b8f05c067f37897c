import Fluent
import Foundation
import InterludeCore

/// A therapist's caseload: their patients with how each keeps up in the practice and the alerts that wait. Reading
/// it is one audited read of every patient on it.
struct CaseloadView: Sendable {
    struct Row: Sendable {
        let entry: Caseloads.Entry
        let compliance: PromptService.Compliance
        let openAlerts: Int
    }

    static func read(for therapist: UserRecord, database: any Database, services: AppServices) async throws -> [Row] {
        guard therapist.role == .therapist else { throw AppError.forbidden(.notAllowed) }
        let entries = try await Caseloads(database: database).caseload(of: therapist.requireID())
        let patients = entries.map { $0.enrollment.$patient.id }
        try await AuditLog(database: database, services: services).record(actor: therapist, action: .caseloadRead, patients: patients)
        let compliance = try await PromptService(database: database, services: services)
            .compliance(of: patients, studies: Set(entries.map { $0.enrollment.$study.id }))
        let alerts = try await AlertInbox(staff: therapist, database: database, services: services).openCounts()
        return entries.map { entry in
            let id = entry.enrollment.$patient.id
            return Row(entry: entry, compliance: compliance[id] ?? PromptService.Compliance(), openAlerts: alerts[id] ?? 0)
        }
    }
}
