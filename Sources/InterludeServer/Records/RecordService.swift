import Fluent
import Foundation
import InterludeCore
import SQLKit

/// What a record of one kind holds: the Core type of its content, and the moment that orders it.
protocol RecordContent: Codable, Sendable, Equatable {
    static var recordKind: RecordKind { get }
    var occurredAt: Date { get }
    /// When the person is to be reminded of the record, if ever.
    func reminder(now: Date, in zone: TimeZone) -> Date?
}

extension RecordContent {
    func reminder(now: Date, in zone: TimeZone) -> Date? { nil }
}

extension HealthEvent: RecordContent {
    static let recordKind = RecordKind.event
}

extension Audiogram: RecordContent {
    static let recordKind = RecordKind.audiogram
    var occurredAt: Date { measuredAt }
}

extension Mood: RecordContent {
    static let recordKind = RecordKind.mood
    var occurredAt: Date { recordedAt }
}

extension Thought: RecordContent {
    static let recordKind = RecordKind.thought
    var occurredAt: Date { addedAt }
}

extension ThoughtOccurrence: RecordContent {
    static let recordKind = RecordKind.thoughtOccurrence
    var occurredAt: Date { recordedAt }
}

extension Therapy: RecordContent {
    static let recordKind = RecordKind.therapy

    func reminder(now: Date, in zone: TimeZone) -> Date? { endReminder(now: now, in: zone) }
    /// The start of its first day (UTC), for ordering beside timed records.
    var occurredAt: Date { Date(timeIntervalSince1970: Double(startDate.daysSinceEpoch) * 86_400) }
}

/// The records patients keep, every kind through the same steps: created under the client's id (a repeat finds
/// the first), edited against the version they were based on (a stale edit is a conflict, never lost silently),
/// deleted; content sealed at rest.
struct RecordService: Sendable {
    let database: any Database
    let services: AppServices

    private var now: Date { services.clock.now }

    /// A record with its content opened.
    struct Stored<Content: RecordContent>: Sendable {
        let record: EntryRecord
        let content: Content
    }

    func list<Content: RecordContent>(_ type: Content.Type, of patientID: UUID) async throws -> [Stored<Content>] {
        try await EntryRecord.query(on: database).filter(\.$patient.$id == patientID).filter(
            \.$kind == Content.recordKind
        )
        .sort(\.$occurredAt, .descending).all().map(open)
    }

    /// One record of the patient's, or nil when they have none of this kind under the id.
    func record<Content: RecordContent>(_ id: UUID, _ type: Content.Type, of patientID: UUID) async throws -> Stored<
        Content
    >? {
        guard let record = try await EntryRecord.find(id, on: database), record.$patient.id == patientID,
            record.kind == Content.recordKind
        else { return nil }
        return try open(record)
    }

    /// Stores a new record; the same id sent again by the same person answers the stored one (`created` false), as
    /// does, for a record with a `matchKey`, another of theirs with the same key stored meanwhile.
    func create<Content: RecordContent>(_ content: Content, id: UUID, by patient: UserRecord, matchKey: String? = nil)
        async throws
        -> (stored: Stored<Content>, created: Bool)
    {
        let patientID = try patient.requireID()
        if let existing = try await EntryRecord.find(id, on: database) {
            guard existing.$patient.id == patientID, existing.kind == Content.recordKind else {
                throw AppError.conflict(.recordIDTaken)
            }
            return (try open(existing), false)
        }
        try await ErasedIDs(database: database, services: services).refuse(id)
        let record = EntryRecord(
            id: id, patientID: patientID, kind: Content.recordKind, occurredAt: content.occurredAt,
            content: try seal(content), now: now)
        record.remindAt = content.reminder(now: now, in: patient.zone)
        record.matchKey = matchKey
        do {
            try await record.create(on: database)
        } catch let error as any DatabaseError where error.isConstraintFailure {
            // The same create, sent twice at once: the first one stands.
            if let stored = try await EntryRecord.find(id, on: database), stored.$patient.id == patientID {
                return (try open(stored), false)
            }
            if let matchKey,
                let stored = try await EntryRecord.query(on: database).filter(\.$patient.$id == patientID).filter(
                    \.$matchKey == matchKey
                ).first()
            {
                return (try open(stored), false)
            }
            throw AppError.conflict(.recordIDTaken)
        }
        return (Stored(record: record, content: content), true)
    }

    /// Replaces a record's content if nobody changed it since `baseVersion`; otherwise 409 `record-changed`.
    func update<Content: RecordContent>(_ content: Content, id: UUID, baseVersion: Int, by patient: UserRecord)
        async throws
        -> Stored<Content>
    {
        _ = try await own(id, kind: Content.recordKind, of: patient)
        let changed = try await database.updateRow(
            EntryRecord.schema, id: id,
            set: [
                "content": SQLBind(try seal(content)), "occurred_at": SQLBind(content.occurredAt),
                "updated_at": SQLBind(now),
                "version": SQLBind(baseVersion + 1), "remind_at": SQLBind(content.reminder(now: now, in: patient.zone)),
            ],
            if: { $0.where("version", .equal, SQLBind(baseVersion)) })
        guard changed, let stored = try await EntryRecord.find(id, on: database) else {
            throw AppError.conflict(.recordChanged)
        }
        return try open(stored)
    }

    /// Deletes a record if nobody changed it since `baseVersion`.
    func delete(_ id: UUID, kind: RecordKind, baseVersion: Int, by patient: UserRecord) async throws {
        let record = try await own(id, kind: kind, of: patient)
        try await database.atomically { database in
            let deleted = try await database.deleteRow(EntryRecord.schema, id: id) {
                $0.where("version", .equal, SQLBind(baseVersion))
            }
            // It had moved on to another version, or went meanwhile.
            guard deleted else {
                throw try await EntryRecord.find(id, on: database) == nil
                    ? AppError.notFound : AppError.conflict(.recordChanged)
            }
            try await SyncStamps.bury(SyncEntity(kind), ids: [id], of: record.$patient.id, now: now, on: database)
        }
    }

    /// Who a record is about in FHIR: the patient's pseudonym, never their name.
    func fhirSubject(of patientID: UUID) async throws -> FHIR.Identifier {
        let pseudonym = try await PatientProfileRecord.query(on: database).filter(\.$user.$id == patientID).first()?
            .pseudonym
        return FHIR.Identifier(system: services.settings.publicURL + "/pseudonym", value: pseudonym)
    }

    private func own(_ id: UUID, kind: RecordKind, of patient: UserRecord) async throws -> EntryRecord {
        guard let record = try await EntryRecord.find(id, on: database), record.$patient.id == patient.id,
            record.kind == kind
        else {
            throw AppError.notFound
        }
        return record
    }

    func open<Content: RecordContent>(_ record: EntryRecord) throws -> Stored<Content> {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return Stored(
            record: record,
            content: try decoder.decode(Content.self, from: Data(try services.cipher.open(record.content).utf8)))
    }

    private func seal<Content: RecordContent>(_ content: Content) throws -> String {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = .sortedKeys
        return try services.cipher.seal(String(decoding: try encoder.encode(content), as: UTF8.self))
    }
}
