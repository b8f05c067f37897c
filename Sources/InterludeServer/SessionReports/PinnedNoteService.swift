import Fluent
import Foundation
import InterludeCore

/// Notes therapists pin to days of a client's chart: written by the therapist, read by both.
struct PinnedNoteService: Sendable {
    let database: any Database
    let services: AppServices

    struct Shown: Sendable {
        let id: UUID
        let day: LocalDate
        let text: String
        let authorName: String?
    }

    /// Pins a note for the client in the practice.
    func pin(_ note: PinnedNote, for patientID: UUID, in studyID: UUID, by author: UserRecord) async throws -> Shown {
        let record = PinnedNoteRecord(
            id: UUID(), patientID: patientID, studyID: studyID, authorID: try author.requireID(),
            day: note.day.description,
            sealedText: try services.cipher.seal(note.text), now: services.clock.now)
        try await record.create(on: database)
        return Shown(id: try record.requireID(), day: note.day, text: note.text, authorName: author.name)
    }

    /// Removes one of the client's notes in the practice; not found when it is no such note.
    func unpin(_ noteID: UUID, of patientID: UUID, in studyID: UUID) async throws {
        guard let record = try await PinnedNoteRecord.find(noteID, on: database), record.$patient.id == patientID,
            record.$study.id == studyID
        else { throw AppError.notFound }
        try await record.delete(on: database)
    }

    /// The client's notes on days from `from` to `to` (all when nil), of these practices (all when nil), by day.
    func notes(
        of patientID: UUID, from: LocalDate? = nil, to: LocalDate? = nil, studies: Set<UUID>? = nil, until: Date? = nil
    ) async throws -> [Shown] {
        var query = PinnedNoteRecord.query(on: database).filter(\.$patient.$id == patientID).with(\.$author)
        if let until { query = query.filter(\.$createdAt <= until) }
        if let from { query = query.filter(\.$day >= from.description) }
        if let to { query = query.filter(\.$day <= to.description) }
        if let studies { query = query.filter(\.$study.$id ~~ Array(studies)) }
        return try await query.sort(\.$day).sort(\.$createdAt).all().compactMap { record in
            guard let day = LocalDate(record.day) else { return nil }
            return Shown(
                id: try record.requireID(), day: day, text: try services.cipher.open(record.text),
                authorName: record.author.name)
        }
    }
}
