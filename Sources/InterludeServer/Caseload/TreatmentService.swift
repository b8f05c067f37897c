import Fluent
import Foundation
import InterludeCore

/// Changes to a client's treatment in a practice: the name they are shown under, the therapy's dates, and
/// pausing, resuming or ending it. Pausing or ending takes back what was waiting for the client — prompts not yet
/// open and reinforcement messages planned ahead — and keeps everything that happened.
struct TreatmentService: Sendable {
    let database: any Database
    let services: AppServices

    private var now: Date { services.clock.now }

    func apply(_ update: TreatmentUpdate, to entry: Caseloads.Entry) async throws -> Caseloads.Entry {
        let (profile, enrollment, now) = (entry.profile, entry.enrollment, self.now)
        if let status = update.status, !enrollment.treatmentStatus.canChange(to: status) {
            throw AppError.conflict(.treatmentEnded)
        }
        if let name = update.displayName { enrollment.displayName = name }
        if let start = update.therapyStart { profile.therapyStart = start?.description }
        if let end = update.therapyEnd { profile.therapyEnd = end?.description }
        switch update.status {
        case .active?: enrollment.pausedAt = nil
        case .paused?: enrollment.pausedAt = enrollment.pausedAt ?? now
        case .ended?:
            enrollment.end(as: .ended, at: now)
            enrollment.pausedAt = nil
            if profile.therapyEnd == nil { profile.therapyEnd = LocalDate(now, in: entry.patient.zone).description }
        case nil: break
        }
        enrollment.updatedAt = now
        let patientID = enrollment.$patient.id
        let studyID = enrollment.$study.id
        try await database.atomically { database in
            try await enrollment.save(on: database)
            try await profile.save(on: database)
            if let reason = Self.cancelReason(for: update.status) {
                try await Self.withdrawWaiting(of: patientID, in: studyID, because: reason, now: now, on: database)
            }
        }
        _ = try await Planner(database: database, services: services).run(now: now, patients: [patientID])
        return entry
    }

    /// Prompts a therapist assigned that have not opened are cancelled (planned ones the planner takes back);
    /// reinforcement messages planned ahead are dropped.
    private static func withdrawWaiting(
        of patientID: UUID, in studyID: UUID, because reason: PromptCancelReason, now: Date, on database: any Database
    ) async throws {
        try await PromptRecord.query(on: database)
            .filter(\.$patient.$id == patientID).filter(\.$study.$id == studyID)
            .filter(\.$planID == nil).filter(\.$status == PromptStatus.scheduled).filter(\.$opensAt > now)
            .set(\.$status, to: PromptStatus.cancelled).set(\.$cancelReason, to: reason).set(\.$changedAt, to: now)
            .update()
        try await MessageChoiceService.withdrawPlanned(for: patientID, in: studyID, after: now, on: database)
    }

    /// Pausing or ending a treatment withdraws what was waiting; other changes do not.
    static func cancelReason(for status: TreatmentStatus?) -> PromptCancelReason? {
        switch status {
        case .paused?: .paused
        case .ended?: .ended
        case .active?, nil: nil
        }
    }
}
