import Fluent
import Foundation
import InterludeCore
import SQLKit

/// Appointments for the next therapy session: patients and their therapists keep them; plans open
/// questionnaires around them; a private calendar feed shows them on the phone.
package struct AppointmentService: Sendable {
    let database: any Database
    let services: AppServices

    package init(database: any Database, services: AppServices) {
        self.database = database
        self.services = services
    }

    private var now: Date { services.clock.now }

    /// An appointment with its texts opened.
    package struct Shown: Sendable {
        let id: UUID
        let startsAt: Date
        let endsAt: Date
        let timeZone: String
        let version: Int
        let updatedAt: Date
        let title: String
        let comment: String?
        /// The therapist booked it: it is theirs to move or cancel.
        let bookedByTherapist: Bool
        /// What the patient asked of it, while the therapist has not decided.
        let request: Request?
    }

    /// A patient's open request about a session the therapist booked.
    struct Request: Sendable {
        let kind: AppointmentRequestKind
        /// The time asked for, for a move.
        let startsAt: Date?
        let endsAt: Date?
        let note: String?
        let requestedAt: Date
    }

    /// `until`: only appointments made and last changed before then.
    func appointments(of patientID: UUID, includePast: Bool, until: Date? = nil) async throws -> [Shown] {
        var query = AppointmentRecord.query(on: database).filter(\.$patient.$id == patientID)
        if !includePast { query = query.filter(\.$endsAt > now) }
        if let until { query = query.filter(\.$createdAt <= until).filter(\.$updatedAt <= until) }
        return try await query.sort(\.$startsAt).all().map(open)
    }

    /// Adds an appointment; `id` lets an app keep the id it already uses, and a request sent again with it returns
    /// the appointment made the first time.
    /// `tell`: whether the other side hears of it (not when a demonstration or a benchmark is set up).
    package func create(
        for patient: UserRecord, by author: UserRecord, title: String, startsAt: Date, endsAt: Date, comment: String?,
        id: UUID? = nil, tell: Bool = true
    ) async throws -> Shown {
        let draft = try AppointmentDraft.validate(
            title: title, startsAt: startsAt, endsAt: endsAt, comment: comment, timeZone: patient.zone)
        try await ErasedIDs(database: database, services: services).refuse(id)
        if author.id == patient.id { try await requirePairing(patient) }
        if let id, let existing = try await AppointmentRecord.find(id, on: database) {
            guard existing.$patient.id == patient.id, existing.$createdBy.id == author.id else {
                throw AppError.conflict(.appointmentIDTaken)
            }
            return try open(existing)
        }
        let record = AppointmentRecord(
            patientID: try patient.requireID(), createdBy: try author.requireID(),
            sealedTitle: try services.cipher.seal(draft.title),
            sealedComment: try draft.comment.map(services.cipher.seal),
            startsAt: draft.startsAt, endsAt: draft.endsAt, timeZone: patient.timeZone, now: now)
        record.id = id
        try await record.create(on: database)
        try await replan(patient)
        if tell {
            if author.id != patient.id {
                try await tellPatient(patient, .booked, of: record)
            } else {
                try await tellTherapist(of: try patient.requireID(), .added, about: record)
            }
        }
        return try open(record)
    }

    /// Tells the patient what their therapist did with a session, with its day and time but not its title, which
    /// may show on a locked screen.
    private func tellPatient(_ patient: UserRecord, _ news: PatientNews, of record: AppointmentRecord) async throws {
        let display = DateDisplay(language: patient.language, timeZone: patient.zone)
        try await tell(
            patient, news.rawValue, of: record, path: "/app/appointments",
            ["when": display.dayDateTime(record.startsAt)])
    }

    /// What a patient hears about a session their therapist keeps.
    enum PatientNews: String {
        case booked = "appointmentBooked"
        case moved = "appointmentMoved"
        case cancelled = "appointmentCancelled"
        case declined = "appointmentRequestDeclined"
    }

    /// What a therapist hears of the sessions a patient keeps: the patient's own appointments as they change, and
    /// what the patient asks of the therapist's sessions.
    enum TherapistNews: String {
        case added = "appointmentAdded"
        case changed = "appointmentChanged"
        case deleted = "appointmentDeleted"
        case moveRequested = "appointmentMoveRequested"
        case cancelRequested = "appointmentCancelRequested"
    }

    /// Tells the therapist who follows the patient (or, without one, who booked the session), naming the patient by
    /// code: the text may show on a locked screen.
    private func tellTherapist(of patientID: UUID, _ news: TherapistNews, about record: AppointmentRecord) async throws
    {
        let therapistID = try await Caseloads(database: database).practiceEnrollment(of: patientID)?.$therapist.id
        guard let therapistID = therapistID ?? record.$createdBy.id, therapistID != patientID,
            let therapist = try await UserRecord.find(therapistID, on: database)
        else { return }
        let code =
            try await PatientProfileRecord.query(on: database).filter(\.$user.$id == patientID).first()?.pseudonym ?? ""
        let display = DateDisplay(language: therapist.language, timeZone: therapist.zone)
        try await tell(
            therapist, news.rawValue, of: record, path: ConsoleURL.patient(patientID).path + "#appointments",
            [
                "code": code, "when": display.dayDateTime(record.startsAt),
                "to": record.requestStartsAt.map(display.dayDateTime) ?? "",
            ])
    }

    private func tell(
        _ person: UserRecord, _ key: String, of record: AppointmentRecord, path: String, _ arguments: [String: String]
    ) async throws {
        let id = try record.requireID()
        var item = NotificationOutbox.Item(
            userID: try person.requireID(), category: .appointments,
            dedupeKey: "appointment-news:\(id.lowercasedText):\(key):\(record.version)",
            title: services.localizer.text("notification.\(key).title", person.language),
            body: services.localizer.text("notification.\(key).body", person.language, arguments),
            path: path, dueAt: now, expiresAt: max(record.startsAt, now.addingTimeInterval(86_400)))
        item.appointmentID = id
        _ = try await NotificationOutbox(database: database, localizer: services.localizer).enqueue([item], now: now)
    }

    /// Changes one of the patient's own appointments if nobody changed it since `baseVersion`; otherwise 409
    /// `appointment-changed`. A session the therapist booked is theirs: 409 `appointment-of-therapist`.
    func update(
        _ id: UUID, of patient: UserRecord, baseVersion: Int, title: String, startsAt: Date, endsAt: Date,
        comment: String?
    ) async throws -> Shown {
        let record = try await own(id, of: patient)
        let draft = try AppointmentDraft.validate(
            title: title, startsAt: startsAt, endsAt: endsAt, comment: comment, timeZone: patient.zone)
        let changed = try await database.updateRow(
            AppointmentRecord.schema, id: id,
            set: [
                "title": SQLBind(try services.cipher.seal(draft.title)),
                "comment": SQLBind(try draft.comment.map(services.cipher.seal)), "starts_at": SQLBind(draft.startsAt),
                "ends_at": SQLBind(draft.endsAt), "time_zone": SQLBind(patient.timeZone), "updated_at": SQLBind(now),
                "version": SQLBind(baseVersion + 1),
            ],
            if: { $0.where("version", .equal, SQLBind(baseVersion)) })
        guard changed, let stored = try await AppointmentRecord.find(record.id, on: database) else {
            throw AppError.conflict(.appointmentChanged)
        }
        try await replan(patient)
        try await tellTherapist(of: try patient.requireID(), .changed, about: stored)
        return try open(stored)
    }

    /// Deletes one of the patient's own appointments; a session the therapist booked is theirs.
    func delete(_ id: UUID, of patient: UserRecord) async throws {
        let record = try await own(id, of: patient)
        try await record.delete(on: database)
        try await replan(patient)
        try await tellTherapist(of: try patient.requireID(), .deleted, about: record)
    }

    // MARK: Requests about a therapist's session

    /// The patient asks to move or cancel a session their therapist booked; the therapist hears of it and decides.
    /// A new request replaces the open one.
    func request(
        _ id: UUID, of patient: UserRecord, kind: AppointmentRequestKind, startsAt: Date?, endsAt: Date?, note: String?
    ) async throws -> Shown {
        let record = try await therapistsSession(id, of: patient)
        let draft = try AppointmentRequestDraft.validate(
            kind: kind, startsAt: startsAt, endsAt: endsAt, note: note, timeZone: patient.zone, now: now)
        let stored = try await change(
            record,
            [
                ("request_kind", SQLBind(draft.kind.rawValue)), ("request_starts_at", SQLBind(draft.startsAt)),
                ("request_ends_at", SQLBind(draft.endsAt)),
                ("request_note", SQLBind(try draft.note.map(services.cipher.seal))),
                ("requested_at", SQLBind(now)),
            ])
        try await tellTherapist(
            of: try patient.requireID(), draft.kind == .move ? .moveRequested : .cancelRequested, about: stored)
        return try open(stored)
    }

    /// The patient takes back an open request.
    func withdrawRequest(_ id: UUID, of patient: UserRecord) async throws {
        let record = try await therapistsSession(id, of: patient)
        guard record.requestKind != nil else { throw AppError.conflict(.appointmentNoRequest) }
        _ = try await change(record, Self.noRequest)
    }

    /// The therapist grants or declines the patient's request, as it stood at `baseVersion`: a granted move moves the
    /// session, a granted cancellation deletes it; the patient hears either way, and plans follow.
    func decide(_ id: UUID, of patient: UserRecord, grant: Bool, baseVersion: Int) async throws {
        guard let record = try await AppointmentRecord.find(id, on: database), record.$patient.id == patient.id else {
            throw AppError.notFound
        }
        guard record.version == baseVersion else { throw AppError.conflict(.appointmentChanged) }
        guard let kind = record.requestKind else { throw AppError.conflict(.appointmentNoRequest) }
        switch (grant, kind) {
        case (false, _):
            let stored = try await change(record, Self.noRequest)
            try await tellPatient(patient, .declined, of: stored)
        case (true, .move):
            guard let startsAt = record.requestStartsAt, let endsAt = record.requestEndsAt else {
                throw AppError.conflict(.appointmentNoRequest)
            }
            let stored = try await change(
                record, Self.noRequest + [("starts_at", SQLBind(startsAt)), ("ends_at", SQLBind(endsAt))])
            try await replan(patient)
            try await tellPatient(patient, .moved, of: stored)
        case (true, .cancel):
            try await cancel(record, of: patient)
        }
    }

    /// The therapist cancels a session they booked; the patient hears of it and plans follow.
    func cancel(_ id: UUID, of patient: UserRecord) async throws {
        guard let record = try await AppointmentRecord.find(id, on: database), record.$patient.id == patient.id,
            Self.bookedByTherapist(record)
        else { throw AppError.notFound }
        try await cancel(record, of: patient)
    }

    private func cancel(_ record: AppointmentRecord, of patient: UserRecord) async throws {
        guard record.endsAt > now else { throw AppError.conflict(.appointmentOver) }
        try await record.delete(on: database)
        try await replan(patient)
        try await tellPatient(patient, .cancelled, of: record)
    }

    private static let noRequest: [(String, any SQLExpression)] = [
        ("request_kind", SQLLiteral.null), ("request_starts_at", SQLLiteral.null), ("request_ends_at", SQLLiteral.null),
        ("request_note", SQLLiteral.null), ("requested_at", SQLLiteral.null),
    ]

    /// Writes `values` if nobody changed the appointment since it was read, with a new version; 409 otherwise.
    private func change(_ record: AppointmentRecord, _ values: [(String, any SQLExpression)]) async throws
        -> AppointmentRecord
    {
        let id = try record.requireID()
        let changed = try await database.updateRow(
            AppointmentRecord.schema, id: id,
            set: values + [("updated_at", SQLBind(now)), ("version", SQLBind(record.version + 1))],
            if: { $0.where("version", .equal, SQLBind(record.version)) })
        guard changed, let stored = try await AppointmentRecord.find(id, on: database) else {
            throw AppError.conflict(.appointmentChanged)
        }
        return stored
    }

    /// A session the therapist booked for the patient, not yet over: not found for anyone else's, 409 for the
    /// patient's own (they change it themselves) and for one that is over.
    private func therapistsSession(_ id: UUID, of patient: UserRecord) async throws -> AppointmentRecord {
        guard let record = try await AppointmentRecord.find(id, on: database), record.$patient.id == patient.id else {
            throw AppError.notFound
        }
        guard Self.bookedByTherapist(record) else { throw AppError.conflict(.appointmentOwn) }
        guard record.endsAt > now else { throw AppError.conflict(.appointmentOver) }
        try await requirePairing(patient)
        return record
    }

    /// One of the patient's appointments that the patient may change: not found for anyone else's, 409 for a
    /// session the therapist booked.
    func own(_ id: UUID, of patient: UserRecord) async throws -> AppointmentRecord {
        guard let record = try await AppointmentRecord.find(id, on: database), record.$patient.id == patient.id else {
            throw AppError.notFound
        }
        guard !Self.bookedByTherapist(record) else { throw AppError.conflict(.appointmentOfTherapist) }
        try await requirePairing(patient)
        return record
    }

    /// Appointments are kept with a therapist: a patient without one (in a research study only, or whose treatment
    /// ended) keeps none.
    private func requirePairing(_ patient: UserRecord) async throws {
        guard try await Caseloads(database: database).practiceEnrollment(of: try patient.requireID()) != nil else {
            throw AppError.conflict(.notPaired)
        }
    }

    /// Booked by someone other than the patient: their therapist (an erased author leaves it to the patient).
    static func bookedByTherapist(_ record: AppointmentRecord) -> Bool {
        record.$createdBy.id.map { $0 != record.$patient.id } ?? false
    }

    /// Plans around appointments follow every change at once.
    private func replan(_ patient: UserRecord) async throws {
        _ = try await Planner(database: database, services: services).run(now: now, patients: [try patient.requireID()])
    }

    func open(_ record: AppointmentRecord) throws -> Shown {
        Shown(
            id: try record.requireID(), startsAt: record.startsAt, endsAt: record.endsAt, timeZone: record.timeZone,
            version: record.version, updatedAt: record.updatedAt, title: try services.cipher.open(record.title),
            comment: try record.comment.map(services.cipher.open), bookedByTherapist: Self.bookedByTherapist(record),
            request: try record.requestKind.map { kind in
                Request(
                    kind: kind, startsAt: record.requestStartsAt, endsAt: record.requestEndsAt,
                    note: try record.requestNote.map(services.cipher.open),
                    requestedAt: record.requestedAt ?? record.updatedAt)
            })
    }

    // MARK: Calendar feed

    /// The secret address of the patient's calendar, made on first use.
    func feedURL(for patient: UserRecord) async throws -> String {
        let patientID = try patient.requireID()
        if let existing = try await CalendarFeedRecord.query(on: database).filter(\.$patient.$id == patientID).first() {
            return feedURL(try services.cipher.open(existing.sealedToken))
        }
        let token = SecretToken.generate()
        do {
            try await CalendarFeedRecord(
                patientID: patientID, tokenHash: token.hash, sealedToken: try services.cipher.seal(token.value),
                now: now
            ).create(on: database)
        } catch let error as any DatabaseError where error.isConstraintFailure {
            // Made by a parallel request a moment ago.
            return try await feedURL(for: patient)
        }
        return feedURL(token.value)
    }

    func revokeFeed(for patient: UserRecord) async throws {
        try await CalendarFeedRecord.query(on: database).filter(\.$patient.$id == patient.requireID()).delete()
    }

    /// The iCalendar text for a feed secret; nil for an unknown or revoked one.
    func calendar(secret: String) async throws -> String? {
        guard !secret.isEmpty, secret.count <= 100,
            let feed = try await CalendarFeedRecord.query(on: database)
                .filter(\.$tokenHash == SecretToken.hash(secret)).first(),
            let patient = try await UserRecord.find(feed.$patient.id, on: database)
        else { return nil }
        let appointments = try await AppointmentRecord.query(on: database)
            .filter(\.$patient.$id == feed.$patient.id)
            .filter(\.$endsAt > now.addingTimeInterval(-90 * 86_400))
            .sort(\.$startsAt).all().map(open)
        let events = appointments.map { shown in
            ICalendar.Event(
                uid: "\(shown.id.lowercasedText)@interlude", title: shown.title,
                startsAt: shown.startsAt, endsAt: shown.endsAt, description: shown.comment, updatedAt: shown.updatedAt)
        }
        return ICalendar.render(
            calendarName: services.localizer.text("calendar.name", patient.language), events: events)
    }

    private func feedURL(_ secret: String) -> String {
        "\(services.settings.publicURL)/calendar/\(secret).ics"
    }
}

extension UserRecord {
    var zone: TimeZone { TimeZone(identifier: timeZone) ?? .gmt }
}
