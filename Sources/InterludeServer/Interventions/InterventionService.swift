import Fluent
import Foundation
import InterludeCore
import SQLKit

/// Sending interventions to patients and following what becomes of them. The server keeps the text it sent and
/// the moments it was seen and completed; a patient's answer to a question never arrives here.
struct InterventionService: Sendable {
    let database: any Database
    let services: AppServices

    private var now: Date { services.clock.now }

    /// An intervention with its text opened.
    struct Opened: Sendable {
        let id: UUID
        let kind: InterventionKind
        let origin: InterventionOrigin
        let deliverAt: Date
        let seenAt: Date?
        let completedAt: Date?
        let text: String

        var state: InterventionState { InterventionState(seenAt: seenAt, completedAt: completedAt) }
    }

    /// A therapist sends a patient an intervention in the study they follow the patient in. The client's id makes
    /// a retried request harmless.
    func send(_ draft: InterventionDraft, to patientID: UUID, in studyID: UUID, by therapist: UserRecord, id: UUID?)
        async throws -> Opened
    {
        if let id, let existing = try await InterventionRecord.find(id, on: database) {
            guard existing.$patient.id == patientID, existing.$sender.id == therapist.id else {
                throw AppError.conflict(.interventionIDTaken)
            }
            return try open(existing)
        }
        return try await deliver(
            draft, to: patientID, studyID: studyID, origin: .therapist, senderID: therapist.requireID(),
            id: id ?? UUID())
    }

    /// Stores an intervention for the patient and queues its notification for the moment it arrives.
    func deliver(
        _ draft: InterventionDraft, to patientID: UUID, studyID: UUID?, origin: InterventionOrigin, senderID: UUID?,
        ruleID: UUID? = nil, id: UUID = UUID(), deliverAt: Date? = nil
    ) async throws -> Opened {
        let record = InterventionRecord(
            id: id, patientID: patientID, studyID: studyID, senderID: senderID, origin: origin,
            kind: draft.kind, sealedText: try services.cipher.seal(draft.text), deliverAt: deliverAt ?? now, now: now)
        record.ruleID = ruleID
        do {
            try await record.create(on: database)
        } catch let error as any DatabaseError where error.isConstraintFailure {
            throw AppError.conflict(.interventionIDTaken)
        }
        try await notify(about: [record])
        return try opened(record, text: draft.text)
    }

    /// Queues one notification per intervention, due when it arrives; texts never show the content.
    func notify(about records: [InterventionRecord]) async throws {
        guard !records.isEmpty else { return }
        let patients = try await UserRecord.query(on: database)
            .filter(\.$id ~~ Array(Set(records.map { $0.$patient.id }))).all()
        let language = Dictionary(uniqueKeysWithValues: patients.map { ($0.id!, $0.language) })
        let items = records.compactMap { record -> NotificationOutbox.Item? in
            guard let id = record.id, let patientLanguage = language[record.$patient.id] else { return nil }
            let isMessage = record.kind == .message
            let prefix = isMessage ? "notification.message" : "notification.intervention"
            return NotificationOutbox.Item(
                userID: record.$patient.id, category: isMessage ? .messages : .interventions,
                dedupeKey: Self.dedupeKey(of: id), title: services.localizer.text("\(prefix).title", patientLanguage),
                body: services.localizer.text("\(prefix).body", patientLanguage),
                path: "/app/interventions/\(id.lowercasedText)", dueAt: record.deliverAt,
                expiresAt: record.deliverAt.addingTimeInterval(Self.notificationLifetime))
        }
        try await NotificationOutbox(database: database, localizer: services.localizer).enqueue(items, now: now)
    }

    /// A notification about an intervention is worth sending for this long after it arrived.
    static let notificationLifetime: TimeInterval = 24 * 3600

    static func dedupeKey(of id: UUID) -> String { "intervention:\(id.lowercasedText)" }

    /// The intervention a notification's key names, if it names one.
    static func interventionID(inDedupeKey key: String) -> UUID? {
        key.hasPrefix("intervention:") ? UUID(uuidString: String(key.dropFirst("intervention:".count))) : nil
    }

    /// What the patient has received so far (or only in `studies`), newest first.
    /// `until`: only what arrived before then, as it stood then (seen or completed later shows as not yet).
    func received(by patientID: UUID, studies: Set<UUID>? = nil, until: Date? = nil) async throws -> [Opened] {
        var query = InterventionRecord.query(on: database).filter(\.$patient.$id == patientID)
        if let studies { query = query.filter(\.$study.$id ~~ Array(studies)) }
        let end = min(now, until ?? now)
        return
            try await query
            .filter(\.$deliverAt <= end)
            .filter(\.$createdAt <= end)
            .sort(\.$deliverAt, .descending)
            .all()
            .map { record in
                let opened = try open(record)
                guard until != nil else { return opened }
                return Opened(
                    id: opened.id, kind: opened.kind, origin: opened.origin, deliverAt: opened.deliverAt,
                    seenAt: opened.seenAt.flatMap { $0 <= end ? $0 : nil },
                    completedAt: opened.completedAt.flatMap { $0 <= end ? $0 : nil }, text: opened.text)
            }
    }

    /// The newest of what reached the patient and was not opened yet (at most `limit`), and how many there are.
    func unseen(by patientID: UUID, limit: Int) async throws -> (newest: [Opened], count: Int) {
        let query = InterventionRecord.query(on: database)
            .filter(\.$patient.$id == patientID)
            .filter(\.$deliverAt <= now)
            .filter(\.$seenAt == nil)
        let count = try await query.copy().count()
        let newest = try await query.sort(\.$deliverAt, .descending).limit(limit).all().map(open)
        return (newest, count)
    }

    /// The patient opened it; the first time counts.
    func markSeen(_ id: UUID, by patient: UserRecord) async throws -> Opened {
        let record = try await own(id, of: patient)
        if record.seenAt == nil {
            record.seenAt = now
            record.changedAt = now
            try await record.save(on: database)
        }
        return try open(record)
    }

    /// The patient confirmed it (a task done, a question answered on the device); after that it is read-only.
    func complete(_ id: UUID, by patient: UserRecord) async throws -> Opened {
        let record = try await own(id, of: patient)
        if record.completedAt == nil, let studyID = record.$study.id {
            try await ConsentService(database: database, services: services).requireAnswered(
                by: record.$patient.id, in: studyID)
        }
        let completed = try await database.updateRow(
            InterventionRecord.schema, id: id,
            set: [
                "completed_at": SQLBind(now), "changed_at": SQLBind(now),
                "seen_at": SQLFunction("COALESCE", args: SQLIdentifier("seen_at"), SQLBind(now)),
            ],
            if: { $0.where("completed_at", .is, SQLLiteral.null) })
        guard completed, let stored = try await InterventionRecord.find(record.id, on: database) else {
            throw AppError.conflict(.interventionCompleted)
        }
        return try open(stored)
    }

    private func own(_ id: UUID, of patient: UserRecord) async throws -> InterventionRecord {
        guard let record = try await InterventionRecord.find(id, on: database), record.$patient.id == patient.id,
            record.deliverAt <= now
        else { throw AppError.notFound }
        return record
    }

    func open(_ record: InterventionRecord) throws -> Opened {
        try opened(record, text: services.cipher.open(record.text))
    }

    private func opened(_ record: InterventionRecord, text: String) throws -> Opened {
        Opened(
            id: try record.requireID(), kind: record.kind, origin: record.origin, deliverAt: record.deliverAt,
            seenAt: record.seenAt, completedAt: record.completedAt, text: text)
    }
}
