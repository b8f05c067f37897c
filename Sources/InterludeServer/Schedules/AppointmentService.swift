import Fluent
import Foundation
import InterludeCore

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
    }

    /// `until`: only appointments made and last changed before then.
    func appointments(of patientID: UUID, includePast: Bool, until: Date? = nil) async throws -> [Shown] {
        var query = AppointmentRecord.query(on: database).filter(\.$patient.$id == patientID)
        if !includePast { query = query.filter(\.$endsAt > now) }
        if let until { query = query.filter(\.$createdAt <= until).filter(\.$updatedAt <= until) }
        return try await query.sort(\.$startsAt).all().map(open)
    }

    /// Adds an appointment; `id` lets an app that created it offline keep the id it already uses.
    func create(
        for patient: UserRecord, by author: UserRecord, title: String, startsAt: Date, endsAt: Date, comment: String?,
        id: UUID? = nil
    ) async throws -> Shown {
        let draft = try AppointmentDraft.validate(
            title: title, startsAt: startsAt, endsAt: endsAt, comment: comment, timeZone: patient.zone)
        try await ErasedIDs(database: database, services: services).refuse(id)
        let record = AppointmentRecord(
            patientID: try patient.requireID(), createdBy: try author.requireID(),
            sealedTitle: try services.cipher.seal(draft.title), sealedComment: try draft.comment.map(services.cipher.seal),
            startsAt: draft.startsAt, endsAt: draft.endsAt, timeZone: patient.timeZone, now: now)
        record.id = id
        try await record.create(on: database)
        try await replan(patient)
        return try open(record)
    }

    func update(
        _ id: UUID, of patient: UserRecord, title: String, startsAt: Date, endsAt: Date, comment: String?
    ) async throws -> Shown {
        let record = try await find(id, of: patient)
        let draft = try AppointmentDraft.validate(
            title: title, startsAt: startsAt, endsAt: endsAt, comment: comment, timeZone: patient.zone)
        record.title = try services.cipher.seal(draft.title)
        record.comment = try draft.comment.map(services.cipher.seal)
        record.startsAt = draft.startsAt
        record.endsAt = draft.endsAt
        record.timeZone = patient.timeZone
        record.updatedAt = now
        record.version += 1
        try await record.save(on: database)
        try await replan(patient)
        return try open(record)
    }

    func delete(_ id: UUID, of patient: UserRecord) async throws {
        let record = try await find(id, of: patient)
        try await record.delete(on: database)
        try await replan(patient)
    }

    private func find(_ id: UUID, of patient: UserRecord) async throws -> AppointmentRecord {
        guard let record = try await AppointmentRecord.find(id, on: database), record.$patient.id == patient.id else {
            throw AppError.notFound
        }
        return record
    }

    /// Plans around appointments follow every change at once.
    private func replan(_ patient: UserRecord) async throws {
        _ = try await Planner(database: database, services: services).run(now: now, patients: [try patient.requireID()])
    }

    func open(_ record: AppointmentRecord) throws -> Shown {
        Shown(
            id: try record.requireID(), startsAt: record.startsAt, endsAt: record.endsAt, timeZone: record.timeZone,
            version: record.version, updatedAt: record.updatedAt, title: try services.cipher.open(record.title),
            comment: try record.comment.map(services.cipher.open))
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
