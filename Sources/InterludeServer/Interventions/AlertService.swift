import Fluent
import Foundation
import InterludeCore
import SQLKit

/// Alerts for therapists: raised by rules, acknowledged with a note, escalated to the study owner when a
/// high-priority one waits too long.
struct AlertService: Sendable {
    let database: any Database
    let services: AppServices

    private var now: Date { services.clock.now }

    /// A high-priority alert nobody acknowledged goes to the study owner after this long.
    static let escalationDelay: TimeInterval = 24 * 3600

    struct Opened: Sendable {
        let record: AlertRecord
        let note: String?
        let patientCode: String?

        var priority: AlertPriority { AlertPriority(rawValue: record.priority) ?? .normal }
    }

    /// Raises an alert about the patient for whoever looks after them in the study; high ones also by email.
    func raise(
        about patientID: UUID, studyID: UUID?, priority: AlertPriority, reason: String, firingID: UUID?
    ) async throws -> AlertRecord? {
        guard let recipient = try await recipient(for: patientID, studyID: studyID) else { return nil }
        let alert = AlertRecord()
        alert.id = UUID()
        alert.createdAt = now
        alert.$patient.id = patientID
        alert.studyID = studyID
        alert.$recipient.id = recipient
        alert.priority = priority.rawValue
        alert.reason = reason
        alert.firingID = firingID
        try await alert.create(on: database)
        if priority == .high { try await notify(recipient, about: alert, escalated: false) }
        return alert
    }

    /// The patient's therapist (their practice's), or else the owner of the study the alert is about.
    private func recipient(for patientID: UUID, studyID: UUID?) async throws -> UUID? {
        if let therapist = try await Caseloads(database: database).practiceEnrollment(of: patientID)?.$therapist.id {
            return therapist
        }
        guard let studyID else { return nil }
        return try await StudyRecord.find(studyID, on: database)?.$owner.id
    }

    private func notify(_ recipientID: UUID, about alert: AlertRecord, escalated: Bool) async throws {
        guard let recipient = try await UserRecord.find(recipientID, on: database), let alertID = alert.id else { return }
        let prefix = escalated ? "notification.alert.escalated" : "notification.alert"
        try await NotificationOutbox(database: database, localizer: services.localizer).enqueue(
            [
                .init(
                    userID: recipientID, category: .alerts,
                    dedupeKey: "alert:\(alertID.uuidString.lowercased()):\(escalated ? "escalated" : "raised")",
                    title: services.localizer.text("\(prefix).title", recipient.language),
                    body: services.localizer.text("\(prefix).body", recipient.language),
                    path: "/console/alerts", dueAt: now, expiresAt: now.addingTimeInterval(7 * 86_400))
            ], now: now)
    }

    /// The alerts for the staff member (theirs and those escalated to them), open ones first, newest first.
    func alerts(for staff: UserRecord) async throws -> [Opened] {
        let staffID = try staff.requireID()
        let records = try await AlertRecord.query(on: database)
            .group(.or) { $0.filter(\.$recipient.$id == staffID).filter(\.$escalatedTo.$id == staffID) }
            .sort(\.$createdAt, .descending)
            .limit(500)
            .all()
        let codes = try await patientCodes(Set(records.map { $0.$patient.id }))
        let opened = try records.map {
            Opened(record: $0, note: try $0.note.map(services.cipher.open), patientCode: codes[$0.$patient.id])
        }
        let open = opened.filter { $0.record.acknowledgedAt == nil }
        let done = opened.filter { $0.record.acknowledgedAt != nil }
        if !opened.isEmpty {
            try await AuditLog(database: database, now: now)
                .record(actor: staff, action: .alertsRead, patients: Array(Set(records.map { $0.$patient.id })))
        }
        return open + done
    }

    /// How many alerts wait for the staff member's acknowledgement.
    func openCount(for staff: UserRecord) async throws -> Int {
        try await waiting(for: staff).count()
    }

    /// How many alerts about each of the staff member's patients wait for acknowledgement.
    func openCounts(for staff: UserRecord) async throws -> [UUID: Int] {
        Dictionary(grouping: try await waiting(for: staff).all(), by: { $0.$patient.id }).mapValues(\.count)
    }

    /// The alerts for the staff member (theirs or escalated to them) that nobody acknowledged yet.
    private func waiting(for staff: UserRecord) throws -> QueryBuilder<AlertRecord> {
        let staffID = try staff.requireID()
        return AlertRecord.query(on: database)
            .filter(\.$acknowledgedAt == nil)
            .group(.or) { $0.filter(\.$recipient.$id == staffID).filter(\.$escalatedTo.$id == staffID) }
    }

    /// The alerts about one patient, for the patient's page.
    func alerts(about patientID: UUID) async throws -> [Opened] {
        try await AlertRecord.query(on: database)
            .filter(\.$patient.$id == patientID)
            .sort(\.$createdAt, .descending)
            .all()
            .map { Opened(record: $0, note: try $0.note.map(services.cipher.open), patientCode: nil) }
    }

    /// The recipient, or the person it was escalated to, acknowledges it with a note; only once.
    func acknowledge(_ id: UUID, note: String?, by staff: UserRecord) async throws -> Opened {
        let staffID = try staff.requireID()
        guard let alert = try await AlertRecord.find(id, on: database),
            alert.$recipient.id == staffID || alert.$escalatedTo.id == staffID
        else { throw AppError.notFound }
        var validator = FieldValidator()
        let text = validator.text(note, field: "note", maxLength: InterventionDraft.textMaxLength)
        try validator.check()
        guard alert.acknowledgedAt == nil else { throw AppError.conflict(.alertAcknowledged) }
        alert.acknowledgedAt = now
        alert.$acknowledgedBy.id = staffID
        alert.note = try services.cipher.seal(text!)
        try await alert.save(on: database)
        try await AuditLog(database: database, now: now)
            .record(actor: staff, action: .alertAcknowledged, patients: [alert.$patient.id], target: id.uuidString)
        let codes = try await patientCodes([alert.$patient.id])
        return Opened(record: alert, note: text, patientCode: codes[alert.$patient.id])
    }

    /// Hands high-priority alerts unacknowledged for a day to the owner of the study they are about (or, when
    /// that owner is the recipient, as in a therapist's own practice, to the first active administrator). A conditional update makes each escalation happen once
    /// even with several processes. Returns how many were escalated.
    func escalateOverdue() async throws -> Int {
        let overdue = try await AlertRecord.query(on: database)
            .filter(\.$priority == AlertPriority.high.rawValue)
            .filter(\.$acknowledgedAt == nil)
            .filter(\.$escalatedAt == nil)
            .filter(\.$createdAt <= now.addingTimeInterval(-Self.escalationDelay))
            .all()
        var escalated = 0
        for alert in overdue {
            var target = try await alert.studyID.asyncMap { try await StudyRecord.find($0, on: database)?.$owner.id } ?? nil
            if target == nil || target == alert.$recipient.id {
                target = try await UserRecord.query(on: database).filter(\.$role == Role.admin.rawValue)
                    .filter(\.$deactivatedAt == nil).sort(\.$createdAt).first()?.id
            }
            guard let target, target != alert.$recipient.id else { continue }
            let claimed = try await (database as! any SQLDatabase)
                .update(AlertRecord.schema)
                .set("escalated_at", to: SQLBind(now))
                .set("escalated_to", to: SQLBind(target))
                .where("id", .equal, SQLBind(try alert.requireID()))
                .where("escalated_at", .is, SQLLiteral.null)
                .returning("id")
                .all()
            guard !claimed.isEmpty else { continue }
            try await notify(target, about: alert, escalated: true)
            escalated += 1
        }
        return escalated
    }

    private func patientCodes(_ patientIDs: Set<UUID>) async throws -> [UUID: String] {
        let profiles = try await PatientProfileRecord.query(on: database).filter(\.$user.$id ~~ Array(patientIDs)).all()
        return Dictionary(uniqueKeysWithValues: profiles.map { ($0.$user.id, $0.pseudonym) })
    }
}
