import Fluent
import Foundation
import InterludeCore
import SQLKit

/// Appointments for the next therapy session: patients and their therapists keep them; plans open
/// questionnaires around them; a private calendar feed shows them on the phone.
struct AppointmentService: Sendable {
    let database: any Database
    let services: AppServices

    private var now: Date { services.clock.now }

    /// An appointment with its texts opened.
    struct Shown: Sendable {
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
    /// `tell`: whether the patient hears of a session their therapist booked (not when a demonstration is set up).
    func create(
        for patient: UserRecord, by author: UserRecord, title: String, startsAt: Date, endsAt: Date, comment: String?,
        id: UUID? = nil, tell: Bool = true
    ) async throws -> Shown {
        let draft = try AppointmentDraft.validate(
            title: title, startsAt: startsAt, endsAt: endsAt, comment: comment, timeZone: patient.zone)
        try await ErasedIDs(database: database, services: services).refuse(id)
        if let id, let existing = try await AppointmentRecord.find(id, on: database) {
            guard existing.$patient.id == patient.id, existing.$createdBy.id == author.id else {
                throw AppError.conflict(.appointmentIDTaken)
            }
            return try open(existing)
        }
        let record = AppointmentRecord(
            patientID: try patient.requireID(), createdBy: try author.requireID(),
            sealedTitle: try services.cipher.seal(draft.title), sealedComment: try draft.comment.map(services.cipher.seal),
            startsAt: draft.startsAt, endsAt: draft.endsAt, timeZone: patient.timeZone, now: now)
        record.id = id
        try await record.create(on: database)
        try await replan(patient)
        if tell, author.id != patient.id { try await tellPatient(patient, booked: record) }
        return try open(record)
    }

    /// Tells the patient that their therapist booked a session, with its day and time but not its title, which may
    /// show on a locked screen.
    private func tellPatient(_ patient: UserRecord, booked record: AppointmentRecord) async throws {
        let id = try record.requireID()
        let language = patient.language
        let display = DateDisplay(language: language, timeZone: patient.zone)
        var item = NotificationOutbox.Item(
            userID: try patient.requireID(), category: .appointments, dedupeKey: "appointment:\(id.lowercasedText):booked",
            title: services.localizer.text("notification.appointmentBooked.title", language),
            body: services.localizer.text("notification.appointmentBooked.body", language, ["when": display.dayDateTime(record.startsAt)]),
            path: "/app/appointments", dueAt: now, expiresAt: record.startsAt)
        item.appointmentID = id
        _ = try await NotificationOutbox(database: database, localizer: services.localizer).enqueue([item], now: now)
    }

    /// Changes one of the patient's own appointments if nobody changed it since `baseVersion`; otherwise 409
    /// `appointment-changed`. A session the therapist booked is theirs: 409 `appointment-of-therapist`.
    func update(
        _ id: UUID, of patient: UserRecord, baseVersion: Int, title: String, startsAt: Date, endsAt: Date, comment: String?
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
        return try open(stored)
    }

    /// Deletes one of the patient's own appointments; a session the therapist booked is theirs.
    func delete(_ id: UUID, of patient: UserRecord) async throws {
        let record = try await own(id, of: patient)
        try await record.delete(on: database)
        try await replan(patient)
    }

    /// One of the patient's appointments that the patient may change: not found for anyone else's, 409 for a
    /// session the therapist booked.
    func own(_ id: UUID, of patient: UserRecord) async throws -> AppointmentRecord {
        guard let record = try await AppointmentRecord.find(id, on: database), record.$patient.id == patient.id else {
            throw AppError.notFound
        }
        guard !Self.bookedByTherapist(record) else { throw AppError.conflict(.appointmentOfTherapist) }
        return record
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
            comment: try record.comment.map(services.cipher.open), bookedByTherapist: Self.bookedByTherapist(record))
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
                patientID: patientID, tokenHash: token.hash, sealedToken: try services.cipher.seal(token.value), now: now
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
