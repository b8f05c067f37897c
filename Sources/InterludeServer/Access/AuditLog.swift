import Fluent
import Foundation

/// Writes the append-only record of staff reads and changes of patient data.
struct AuditLog: Sendable {
    let database: any Database
    let services: AppServices

    private var now: Date { services.clock.now }

    /// Records that `actor` did `action` concerning each of `patients` (one event each).
    func record(actor: UserRecord, action: AuditAction, patients: [UUID], target: String? = nil) async throws {
        let actorID = try actor.requireID()
        guard !patients.isEmpty else { return }
        try await patients.map { patient in
            AuditEventRecord(
                actorID: actorID, actorRole: actor.role, action: action.rawValue, subjectID: patient, target: target,
                occurredAt: now)
        }.create(on: database)
    }

    /// Records a staff action that concerns no single patient (creating a user, changing a setting).
    func record(actor: UserRecord, action: AuditAction, target: String?) async throws {
        try await AuditEventRecord(
            actorID: try actor.requireID(), actorRole: actor.role, action: action.rawValue, subjectID: nil,
            target: target, occurredAt: now
        ).create(on: database)
    }
}

/// The things staff do that the audit log records.
enum AuditAction: String, Sendable, CaseIterable {
    case caseloadRead = "caseload.read"
    case patientRead = "patient.read"
    case participantsRead = "study.participants.read"
    case enrollmentDecided = "study.enrollment.decided"
    case allocationsRead = "study.allocations.read"
    case allocationCorrected = "study.allocation.corrected"
    case promptAssigned = "prompt.assigned"
    case promptsRead = "prompts.read"
    case responsesRead = "responses.read"
    case schedulePreviewed = "schedule.previewed"
    case planChanged = "plan.changed"
    case notificationsRead = "notifications.read"
    case interventionSent = "intervention.sent"
    case interventionsRead = "interventions.read"
    case alertsRead = "alerts.read"
    case alertAcknowledged = "alert.acknowledged"
    case studyChanged = "study.changed"
    case consentVersionCreated = "study.consent.versionCreated"
    case teamChanged = "study.team.changed"
    case exportRequested = "study.export.requested"
    case exportDownloaded = "study.export.downloaded"
    case libraryChanged = "study.library.changed"
    case firingsRead = "rule.firings.read"
    case ruleChanged = "rule.changed"
    case ruleDryRun = "rule.dry-run"
    case timelineRead = "timeline.read"
    case appointmentsRead = "appointments.read"
    case recordsRead = "records.read"
    case appointmentAdded = "appointment.added"
    case appointmentCancelled = "appointment.cancelled"
    case appointmentRequestDecided = "appointment.request-decided"
    case thoughtAdded = "thought.added"
    case notesRead = "notes.read"
    case notePinned = "note.pinned"
    case noteUnpinned = "note.unpinned"
    case treatmentChanged = "patient.treatment.changed"
    case invitationSent = "patient.invitation.sent"
    case passwordResetSent = "patient.password-reset.sent"
    case userCreated = "user.created"
    case userDeactivated = "user.deactivated"
    case userReactivated = "user.reactivated"
    case userChanged = "user.changed"
    case userPasswordReset = "user.password.reset"
    case userDeleted = "user.deleted"
    case siteTextChanged = "settings.text.changed"
    case instrumentImported = "instrument.imported"
    case instrumentPublished = "instrument.published"
    case instrumentShared = "instrument.shared"
    case instrumentPinMoved = "instrument.pin.moved"
    case twoFactorEnabled = "account.two-factor.enabled"
    case twoFactorDisabled = "account.two-factor.disabled"
    case twoFactorReset = "user.two-factor.reset"
    case twoFactorRequirementChanged = "settings.two-factor.required"
}
