import Fluent
import Foundation
import InterludeCore
import SQLKit

/// The one list of every table that holds data about a person, and how each loses it when the person's account
/// is deleted. A test checks that every table of the schema is named here, either as holding personal data or
/// as holding none, so a new table cannot be forgotten.
enum ErasureMap {
    /// Tables with rows about a person, in the order they are emptied (children before parents).
    static let personalTables: [String] = [
        ExportParticipantRecord.schema,
        ExportRecord.schema,
        TimeZoneChangeRecord.schema,
        AccessTokenRecord.schema,
        SyncMutationRecord.schema,
        SyncTombstoneRecord.schema,
        NotificationRecord.schema,
        AlertRecord.schema,
        RuleFiringRecord.schema,
        InterventionRecord.schema,
        InterventionBackupRecord.schema,
        DeviceRecord.schema,
        NotificationPreferenceRecord.schema,
        ResponseRecord.schema,
        PromptRecord.schema,
        PlanAdjustmentRecord.schema,
        PlanRecord.schema,
        AppointmentRecord.schema,
        CalendarFeedRecord.schema,
        SessionRecord.schema,
        EmailTokenRecord.schema,
        RateLimitEventRecord.schema,
        ConsentRecord.schema,
        EnrollmentRecord.schema,
        PairingCodeRecord.schema,
        PatientProfileRecord.schema,
        TherapistProfileRecord.schema,
        StudyStaffRecord.schema,
        AuditEventRecord.schema,
        UserRecord.schema,
    ]

    /// Tables that never hold data about a person.
    static let impersonalTables: Set<String> = [
        StudyRecord.schema,
        InstrumentVersionRecord.schema,
        InstrumentPinRecord.schema,
        InterventionTemplateRecord.schema,
        StudyMessageRecord.schema,
        MessagePlanRecord.schema,
        RuleRecord.schema,
        SettingRecord.schema,
        ErasureRecord.schema,
        "_fluent_migrations",
    ]
}

/// Deletes an account and every row about its owner, leaving only an erasure tombstone.
struct ErasureService: Sendable {
    let database: any Database
    let services: AppServices

    /// A patient deletes their own account, confirming with the password.
    func deleteOwnAccount(_ user: UserRecord, password: String) async throws {
        guard user.role == .patient else { throw AppError.forbidden(.notAllowed) }
        guard try await services.passwords.verify(password, against: user.passwordHash) else {
            throw AppError.field("password", .mismatch)
        }
        try await erase(user)
    }

    /// Removes the person's rows table by table as `ErasureMap` lists them, in one transaction.
    func erase(_ user: UserRecord) async throws {
        let now = services.clock.now
        let tombstone = ErasureRecord(id: UUID(), role: user.role, erasedAt: now)
        let withdrawn = try await database.transaction { database in
            // Exports that hold the person's data are withdrawn: their files are removed once this commits.
            let exports = try await ExportParticipantRecord.query(on: database).filter(\.$patient.$id == user.requireID())
                .all(\.$export.$id)
            for table in ErasureMap.personalTables {
                try await erase(table: table, of: user, tombstoneID: tombstone.id!, on: database)
            }
            try await ExportRecord.query(on: database).filter(\.$id ~~ exports)
                .set(\.$status, to: .expired).set(\.$expiresAt, to: now).set(\.$error, to: ExportService.withdrawnAfterErasure)
                .update()
            try await tombstone.create(on: database)
            return exports
        }
        ExportFiles(services: services).remove(withdrawn)
    }

    private func erase(table: String, of user: UserRecord, tombstoneID: UUID, on database: any Database) async throws {
        let userID = try user.requireID()
        switch table {
        case ExportParticipantRecord.schema:
            try await ExportParticipantRecord.query(on: database).filter(\.$patient.$id == userID).delete()
        case ExportRecord.schema:
            // Exports the person asked for stay in the study's history without naming them.
            try await ExportRecord.query(on: database).filter(\.$requestedBy.$id == userID).set(\.$requestedBy.$id, to: nil).update()
        case AccessTokenRecord.schema:
            try await AccessTokenRecord.query(on: database).filter(\.$user.$id == userID).delete()
        case TimeZoneChangeRecord.schema:
            try await TimeZoneChangeRecord.query(on: database).filter(\.$user.$id == userID).delete()
        case SyncMutationRecord.schema:
            try await SyncMutationRecord.query(on: database).filter(\.$user.$id == userID).delete()
        case SyncTombstoneRecord.schema:
            try await SyncTombstoneRecord.query(on: database).filter(\.$user.$id == userID).delete()
        case AlertRecord.schema:
            try await AlertRecord.query(on: database).filter(\.$patient.$id == userID).delete()
        case RuleFiringRecord.schema:
            try await RuleFiringRecord.query(on: database).filter(\.$patient.$id == userID).delete()
        case InterventionRecord.schema:
            try await InterventionRecord.query(on: database).filter(\.$patient.$id == userID).delete()
        case InterventionBackupRecord.schema:
            try await InterventionBackupRecord.query(on: database).filter(\.$user.$id == userID).delete()
        case NotificationRecord.schema:
            try await eraseNotifications(about: userID, on: database)
        case DeviceRecord.schema:
            try await DeviceRecord.query(on: database).filter(\.$user.$id == userID).delete()
        case NotificationPreferenceRecord.schema:
            try await NotificationPreferenceRecord.query(on: database).filter(\.$user.$id == userID).delete()
        case ResponseRecord.schema:
            try await ResponseRecord.query(on: database).filter(\.$patient.$id == userID).delete()
        case PromptRecord.schema:
            try await PromptRecord.query(on: database).filter(\.$patient.$id == userID).delete()
        case PlanAdjustmentRecord.schema:
            try await PlanAdjustmentRecord.query(on: database).filter(\.$patient.$id == userID).delete()
        case PlanRecord.schema:
            // Plans made for this patient alone; their adjustments went with the patient's above.
            let own = try await PlanRecord.query(on: database).filter(\.$patient.$id == userID).all().compactMap(\.id)
            try await PlanAdjustmentRecord.query(on: database).filter(\.$plan.$id ~~ own).delete()
            try await PlanRecord.query(on: database).filter(\.$id ~~ own).delete()
        case AppointmentRecord.schema:
            try await AppointmentRecord.query(on: database).filter(\.$patient.$id == userID).delete()
        case CalendarFeedRecord.schema:
            try await CalendarFeedRecord.query(on: database).filter(\.$patient.$id == userID).delete()
        case SessionRecord.schema:
            try await SessionRecord.query(on: database).filter(\.$user.$id == userID).delete()
        case EmailTokenRecord.schema:
            try await EmailTokenRecord.query(on: database).filter(\.$user.$id == userID).delete()
        case RateLimitEventRecord.schema:
            try await RateLimiter(database: database, services: services)
                .forget([.account(email: user.email), .account(id: userID)])
        case ConsentRecord.schema:
            try await ConsentRecord.query(on: database).filter(\.$user.$id == userID).delete()
        case EnrollmentRecord.schema:
            try await EnrollmentRecord.query(on: database).filter(\.$patient.$id == userID).delete()
        case PairingCodeRecord.schema:
            try await PairingCodeRecord.query(on: database).filter(\.$redeemedBy.$id == userID).delete()
        case PatientProfileRecord.schema:
            try await PatientProfileRecord.query(on: database).filter(\.$user.$id == userID).delete()
        case TherapistProfileRecord.schema:
            try await TherapistProfileRecord.query(on: database).filter(\.$user.$id == userID).delete()
        case StudyStaffRecord.schema:
            try await StudyStaffRecord.query(on: database).filter(\.$user.$id == userID).delete()
        case AuditEventRecord.schema:
            // The log of who looked at the person's data stays, pointing at the tombstone instead of the person and
            // naming no record of theirs: `response:<id>` becomes `response:erased`.
            for event in try await AuditEventRecord.query(on: database).filter(\.$subjectID == userID).all() {
                event.subjectID = tombstoneID
                event.target = event.target.map(Self.withoutIDs)
                try await event.save(on: database)
            }
        case UserRecord.schema:
            try await UserRecord.query(on: database).filter(\.$id == userID).delete()
        default:
            throw ErasureError.tableWithoutRule(table)
        }
    }
}

extension ErasureService {
    /// The person's own notifications, and those sent to others about the person's prompts, appointments and
    /// alerts (a therapist's "look at this alert"), which would otherwise name records that no longer exist.
    private func eraseNotifications(about userID: UUID, on database: any Database) async throws {
        let prompts = try await PromptRecord.query(on: database).filter(\.$patient.$id == userID).all(\.$id)
        let appointments = try await AppointmentRecord.query(on: database).filter(\.$patient.$id == userID).all(\.$id)
        let alerts = try await AlertRecord.query(on: database).filter(\.$patient.$id == userID).all(\.$id)
        try await NotificationRecord.query(on: database).group(.or) { either in
            either.filter(\.$user.$id == userID)
            if !prompts.isEmpty { either.filter(\.$promptID ~~ prompts.map(Optional.some)) }
            if !appointments.isEmpty { either.filter(\.$appointmentID ~~ appointments.map(Optional.some)) }
            for alert in alerts {
                either.filter(\.$dedupeKey, .contains(inverse: false, .prefix), "alert:\(alert.uuidString.lowercased()):")
            }
        }.delete()
    }

    /// An audit target with every id in it replaced by `erased`.
    static func withoutIDs(_ target: String) -> String {
        target.split(separator: ":", omittingEmptySubsequences: false)
            .map { UUID(uuidString: String($0)) == nil ? String($0) : "erased" }
            .joined(separator: ":")
    }
}

enum ErasureError: Error, CustomStringConvertible {
    case tableWithoutRule(String)

    var description: String {
        switch self {
        case .tableWithoutRule(let table): return "ErasureMap names table \(table) but has no rule for it"
        }
    }
}
