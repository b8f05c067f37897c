import FluentKit
import Foundation
import InterludeCore
import SQLKit

/// The rows a sync reads on every request, with statements written out. A full picture holds a month of prompts,
/// and read as Fluent models each row cost ten times its statement (every column went through a property wrapper
/// resolved at run time); these read plain values, on SQLite and PostgreSQL alike. The health records, which change
/// seldom, fill their models straight from the rows, skipping Fluent's query builder.
struct SyncReads: Sendable {
    let sql: any SQLDatabase

    init(database: any Database) {
        sql = Statements.sql(database)
    }

    /// Which rows: those changed after a moment, or the whole picture from a horizon on.
    enum Window: Sendable {
        case changedAfter(Date)
        case from(horizon: Date)
    }

    // MARK: Prompts

    /// A prompt with its status at the moment it was read.
    struct Prompt: ListedPrompt {
        let id: UUID
        let instrumentKey: String
        let instrumentVersion: Int
        let opensAt: Date
        let closesAt: Date
        let status: PromptStatus
        let source: PromptSource
        let completedAt: Date?
        let responseID: UUID?
        let changedAt: Date?

        init(_ row: any SQLRow, now: Date) throws {
            id = try row.decode(column: "id", as: UUID.self)
            instrumentKey = try row.decode(column: "instrument_key", as: String.self)
            instrumentVersion = try row.decode(column: "instrument_version", as: Int.self)
            opensAt = try row.decode(column: "opens_at", as: Date.self)
            closesAt = try row.decode(column: "closes_at", as: Date.self)
            let recorded = try row.decodeName(column: "status", as: PromptStatus.self)
            status = PromptStatus.at(now, recorded: recorded, opensAt: opensAt, closesAt: closesAt)
            source = try row.decodeName(column: "source", as: PromptSource.self)
            completedAt = try row.decodeOptional(column: "completed_at", as: Date.self)
            responseID = try row.decodeOptional(column: "response_id", as: UUID.self)
            changedAt = try row.decodeOptional(column: "changed_at", as: Date.self)
        }
    }

    /// The patient's prompts in the window: changed after its moment, or closing after its horizon; by opening.
    func prompts(of patientID: UUID, in window: Window, now: Date) async throws -> [Prompt] {
        let columns = SQLQueryString(
            "SELECT id, instrument_key, instrument_version, opens_at, closes_at, status, source, completed_at, "
                + "response_id, changed_at FROM prompts WHERE patient_id = ")
        let query: SQLQueryString =
            switch window {
            case .changedAfter(let moment):
                columns + "\(bind: patientID) AND changed_at > \(bind: moment) ORDER BY opens_at"
            case .from(let horizon): columns + "\(bind: patientID) AND closes_at > \(bind: horizon) ORDER BY opens_at"
            }
        return try await sql.raw(query).all().map { try Prompt($0, now: now) }
    }

    // MARK: Appointments

    /// An appointment as it is stored, its texts sealed.
    struct Appointment: Sendable {
        let id: UUID
        let version: Int
        let updatedAt: Date
        let sealedTitle: String
        let sealedComment: String?
        let startsAt: Date
        let endsAt: Date
        let timeZone: String
        /// Who booked it: the patient, their therapist, or nobody known any more.
        let createdBy: UUID?
        /// The patient's open request about it, its note sealed.
        let requestKind: AppointmentRequestKind?
        let requestStartsAt: Date?
        let requestEndsAt: Date?
        let sealedRequestNote: String?
        let requestedAt: Date?

        init(_ row: any SQLRow) throws {
            id = try row.decode(column: "id", as: UUID.self)
            createdBy = try row.decodeOptional(column: "created_by", as: UUID.self)
            version = try row.decode(column: "version", as: Int.self)
            updatedAt = try row.decode(column: "updated_at", as: Date.self)
            sealedTitle = try row.decode(column: "title", as: String.self)
            sealedComment = try row.decodeOptional(column: "comment", as: String.self)
            startsAt = try row.decode(column: "starts_at", as: Date.self)
            endsAt = try row.decode(column: "ends_at", as: Date.self)
            timeZone = try row.decode(column: "time_zone", as: String.self)
            requestKind =
                try row.decodeNil(column: "request_kind")
                ? nil : row.decodeName(column: "request_kind", as: AppointmentRequestKind.self)
            requestStartsAt = try row.decodeOptional(column: "request_starts_at", as: Date.self)
            requestEndsAt = try row.decodeOptional(column: "request_ends_at", as: Date.self)
            sealedRequestNote = try row.decodeOptional(column: "request_note", as: String.self)
            requestedAt = try row.decodeOptional(column: "requested_at", as: Date.self)
        }
    }

    /// The patient's appointments in the window: changed after its moment, or ending after its horizon; by start.
    func appointments(of patientID: UUID, in window: Window) async throws -> [Appointment] {
        let columns = SQLQueryString(
            "SELECT id, version, updated_at, title, comment, starts_at, ends_at, time_zone, created_by, request_kind, "
                + "request_starts_at, request_ends_at, request_note, requested_at FROM appointments "
                + "WHERE patient_id = ")
        let query: SQLQueryString =
            switch window {
            case .changedAfter(let moment):
                columns + "\(bind: patientID) AND updated_at > \(bind: moment) ORDER BY starts_at"
            case .from(let horizon): columns + "\(bind: patientID) AND ends_at > \(bind: horizon) ORDER BY starts_at"
            }
        return try await sql.raw(query).all().map(Appointment.init)
    }

    // MARK: Interventions

    /// An intervention as it is stored, its text sealed.
    struct Intervention: Sendable {
        let id: UUID
        let kind: InterventionKind
        let origin: InterventionOrigin
        let sealedText: String
        let deliverAt: Date
        let seenAt: Date?
        let completedAt: Date?

        init(_ row: any SQLRow) throws {
            id = try row.decode(column: "id", as: UUID.self)
            kind = try row.decodeName(column: "kind", as: InterventionKind.self)
            origin = try row.decodeName(column: "origin", as: InterventionOrigin.self)
            sealedText = try row.decode(column: "text", as: String.self)
            deliverAt = try row.decode(column: "deliver_at", as: Date.self)
            seenAt = try row.decodeOptional(column: "seen_at", as: Date.self)
            completedAt = try row.decodeOptional(column: "completed_at", as: Date.self)
        }
    }

    /// The patient's interventions that have arrived by `now`, in the window: changed or arrived after its moment,
    /// or arrived after its horizon; by arrival. Messages planned ahead count once their moment comes.
    func interventions(of patientID: UUID, arrivedBy now: Date, in window: Window) async throws -> [Intervention] {
        let columns = SQLQueryString(
            "SELECT id, kind, origin, text, deliver_at, seen_at, completed_at FROM interventions WHERE patient_id = ")
        let query: SQLQueryString =
            switch window {
            case .changedAfter(let moment):
                columns + "\(bind: patientID) AND deliver_at <= \(bind: now) AND (changed_at > \(bind: moment) "
                    + "OR deliver_at > \(bind: moment)) ORDER BY deliver_at"
            case .from(let horizon):
                columns + "\(bind: patientID) AND deliver_at <= \(bind: now) AND deliver_at > \(bind: horizon) "
                    + "ORDER BY deliver_at"
            }
        return try await sql.raw(query).all().map(Intervention.init)
    }

    // MARK: Health records

    /// The patient's health records, all of them or those changed after a moment, latest first. They have no
    /// horizon: a full picture holds all of them.
    func records(of patientID: UUID, changedAfter moment: Date?) async throws -> [EntryRecord] {
        var query: SQLQueryString = "SELECT * FROM records WHERE patient_id = \(bind: patientID)"
        if let moment { query = query + " AND updated_at > \(bind: moment)" }
        return try await sql.raw(query + " ORDER BY occurred_at DESC").all().map { try $0.model(EntryRecord.self) }
    }

    // MARK: Deletions

    /// What was deleted of the patient's after `moment`, in the order it was.
    func deletions(of patientID: UUID, after moment: Date) async throws -> [(entity: SyncEntity, id: UUID)] {
        try await sql.raw(
            "SELECT entity, entity_id FROM sync_tombstones WHERE user_id = \(bind: patientID) AND deleted_at > \(bind: moment) ORDER BY deleted_at"
        ).all().map { row in
            (
                try row.decodeName(column: "entity", as: SyncEntity.self),
                try row.decode(column: "entity_id", as: UUID.self)
            )
        }
    }
}

extension SQLRow {
    /// A column that may be NULL. Asking for `T?` would send every value through the database's decoder.
    /// Inlined (as `decodeName`), so that `T` is known where it is called: called on `any SQLRow`, the function
    /// itself is not specialised, and it looked up `T`'s metadata at run time for every column of every row.
    @inline(__always)
    func decodeOptional<T: Decodable>(column: String, as type: T.Type) throws -> T? {
        try decodeNil(column: column) ? nil : decode(column: column, as: type)
    }

    /// A column holding an enum's name (a status, a kind), read as text and named by its case.
    @inline(__always)
    func decodeName<T: RawRepresentable>(column: String, as type: T.Type) throws -> T where T.RawValue == String {
        let name = try decode(column: column, as: String.self)
        guard let value = T(rawValue: name) else {
            throw DecodingError.dataCorrupted(
                .init(codingPath: [], debugDescription: "\(column) holds \(name), which \(T.self) does not name"))
        }
        return value
    }
}
