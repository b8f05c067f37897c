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
        /// Why it was raised: the rule's message and the values that met it.
        var reason: String
        let note: String?
        let patientCode: String?
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
        alert.priority = priority
        alert.reason = try services.cipher.seal(reason)
        alert.firingID = firingID
        try await alert.create(on: database)
        if priority == .high { try await notify(recipient, about: alert, escalated: false) }
        return alert
    }

    /// Whoever leads the study the alert is about: a practice's therapist, a research study's owner (its other staff
    /// who receive alerts see it too). Without a study, the patient's therapist. Never someone of another study.
    private func recipient(for patientID: UUID, studyID: UUID?) async throws -> UUID? {
        if let studyID { return try await StudyRecord.find(studyID, on: database)?.$owner.id }
        return try await Caseloads(database: database).practiceEnrollment(of: patientID)?.$therapist.id
    }

    private func notify(_ recipientID: UUID, about alert: AlertRecord, escalated: Bool) async throws {
        guard let recipient = try await UserRecord.find(recipientID, on: database), let alertID = alert.id else {
            return
        }
        let prefix = escalated ? "notification.alert.escalated" : "notification.alert"
        // The code, never the name: the text may show on a locked screen.
        let code =
            try await PatientProfileRecord.query(on: database).filter(\.$user.$id == alert.$patient.id).first()?
            .pseudonym ?? ""
        try await NotificationOutbox(database: database, localizer: services.localizer).enqueue(
            [
                .init(
                    userID: recipientID, category: .alerts,
                    dedupeKey: "alert:\(alertID.lowercasedText):\(escalated ? "escalated" : "raised")",
                    title: services.localizer.text("\(prefix).title", recipient.language),
                    body: services.localizer.text("\(prefix).body", recipient.language, ["code": code]),
                    path: ConsoleURL.alerts.path + "#alert-\(alertID.uuidString)", dueAt: now,
                    expiresAt: now.addingTimeInterval(7 * 86_400))
            ], now: now)
    }

    /// Who may see an alert: its recipient, whom it was escalated to, and the staff of `studies`.
    struct Audience: Sendable {
        let staffID: UUID
        let studies: [UUID]

        func includes(_ alert: AlertRecord) -> Bool {
            alert.$recipient.id == staffID || alert.$escalatedTo.id == staffID
                || alert.studyID.map(studies.contains) == true
        }
    }

    /// The audience's alerts, risk first: open ones before acknowledged ones, the high-priority ones before the
    /// others, and of those the one waiting longest first; acknowledged ones newest first.
    func alerts(for audience: Audience) async throws -> [Opened] {
        let waiting = try await query(for: audience).filter(\.$acknowledgedAt == nil).sort(\.$createdAt).limit(500)
            .all()
        let done = try await query(for: audience).filter(\.$acknowledgedAt != nil).sort(\.$createdAt, .descending)
            .limit(max(0, 500 - waiting.count)).all()
        return try await open(Self.riskFirst(waiting + done))
    }

    /// Open before acknowledged, high before normal priority, open ones oldest first, acknowledged ones newest first.
    static func riskFirst(_ records: [AlertRecord]) -> [AlertRecord] {
        records.sorted { left, right in
            let leftOpen = left.acknowledgedAt == nil
            let rightOpen = right.acknowledgedAt == nil
            if leftOpen != rightOpen { return leftOpen }
            guard leftOpen else { return left.createdAt > right.createdAt }
            if left.priority != right.priority { return left.priority == .high }
            return left.createdAt < right.createdAt
        }
    }

    /// The audience's alerts that nobody acknowledged yet.
    func waiting(for audience: Audience) async throws -> [AlertRecord] {
        try await query(for: audience).filter(\.$acknowledgedAt == nil).all()
    }

    private func query(for audience: Audience) -> QueryBuilder<AlertRecord> {
        AlertRecord.query(on: database).group(.or) {
            $0.filter(\.$recipient.$id == audience.staffID).filter(\.$escalatedTo.$id == audience.staffID)
            if !audience.studies.isEmpty { $0.filter(\.$studyID ~~ audience.studies) }
        }
    }

    /// The alerts about one patient in `studies`, for the patient's page.
    func alerts(about patientID: UUID, studies: Set<UUID>) async throws -> [Opened] {
        try await open(
            Self.riskFirst(
                try await AlertRecord.query(on: database)
                    .filter(\.$patient.$id == patientID)
                    .filter(\.$studyID ~~ Array(studies))
                    .all()))
    }

    func alert(_ id: UUID) async throws -> Opened? {
        try await AlertRecord.find(id, on: database).asyncMap { try await open([$0])[0] }
    }

    /// Acknowledges it with a note; only once. Whether the staff member may is the caller's to decide.
    func acknowledge(_ alert: AlertRecord, note: String?, by staff: UserRecord) async throws -> Opened {
        let staffID = try staff.requireID()
        var validator = FieldValidator()
        let text = validator.text(note, field: "note", maxLength: InterventionDraft.textMaxLength, lines: .multiple)
        try validator.check()
        let acknowledged = try await database.updateRow(
            AlertRecord.schema, id: try alert.requireID(),
            set: [
                "acknowledged_at": SQLBind(now), "acknowledged_by": SQLBind(staffID),
                "note": SQLBind(try services.cipher.seal(text!)),
            ],
            if: { $0.where("acknowledged_at", .is, SQLLiteral.null) })
        guard acknowledged, let stored = try await AlertRecord.find(alert.id, on: database) else {
            throw AppError.conflict(.alertAcknowledged)
        }
        return try await open([stored])[0]
    }

    private func open(_ records: [AlertRecord]) async throws -> [Opened] {
        let codes = try await patientCodes(Set(records.map { $0.$patient.id }))
        return try records.map {
            Opened(
                record: $0, reason: try services.cipher.open($0.reason), note: try $0.note.map(services.cipher.open),
                patientCode: codes[$0.$patient.id])
        }
    }

    /// Hands high-priority alerts unacknowledged for a day to the owner of the study they are about (or, when
    /// that owner is the recipient, as in a therapist's own practice, to the first active administrator). A conditional update makes each escalation happen once
    /// even with several processes. Returns how many were escalated.
    func escalateOverdue() async throws -> Int {
        let overdue = try await AlertRecord.query(on: database)
            .filter(\.$priority == AlertPriority.high)
            .filter(\.$acknowledgedAt == nil)
            .filter(\.$escalatedAt == nil)
            .filter(\.$createdAt <= now.addingTimeInterval(-Self.escalationDelay))
            .all()
        var escalated = 0
        for alert in overdue {
            var target =
                try await alert.studyID.asyncMap { try await StudyRecord.find($0, on: database)?.$owner.id } ?? nil
            if target == nil || target == alert.$recipient.id {
                target = try await UserRecord.query(on: database).filter(\.$role == Role.admin)
                    .filter(\.$deactivatedAt == nil).sort(\.$createdAt).first()?.id
            }
            guard let target, target != alert.$recipient.id else { continue }
            let claimed = try await database.updateRow(
                AlertRecord.schema, id: try alert.requireID(),
                set: ["escalated_at": SQLBind(now), "escalated_to": SQLBind(target)],
                if: { $0.where("escalated_at", .is, SQLLiteral.null) })
            guard claimed else { continue }
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
