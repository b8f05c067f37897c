import Fluent
import Foundation
import InterludeCore

/// A patient's own view of the audit log: which staff read, changed or exported their data, and when. A therapist
/// is named; researchers appear as the research team of their study, administrators as such; no staff email
/// and no record id is shown.
struct OwnAccessLog: Sendable {
    let database: any Database

    static let maxLimit = 200

    struct Entry: Sendable {
        let id: UUID
        let occurredAt: Date
        let action: String
        let actorRole: Role
        /// The therapist's name, for a therapist.
        let therapistName: String?
        let study: StudyRecord?
    }

    struct Page: Sendable {
        let entries: [Entry]
        let next: AuditReader.Cursor?
    }

    /// One page, newest first, of the events about `patient` older than `before`.
    func page(of patient: UserRecord, before: String?, limit: Int) async throws -> Page {
        guard patient.role == .patient else { throw AppError.forbidden(.notAllowed) }
        var cursor: AuditReader.Cursor?
        if let before {
            guard let parsed = AuditReader.Cursor(before) else { throw AppError.field("before", .invalidFormat) }
            cursor = parsed
        }
        guard (1...Self.maxLimit).contains(limit) else {
            throw AppError.field("limit", .outOfRange, limit: Self.maxLimit)
        }
        let reader = AuditReader(database: database)
        let events = try await reader.events(
            actor: nil, patient: try patient.requireID(), before: cursor, limit: limit + 1)
        let shown = Array(events.prefix(limit))
        let therapistIDs = Set(shown.filter { $0.actorRole == .therapist }.map(\.actorID))
        let names = try await TherapistProfileRecord.query(on: database).filter(\.$user.$id ~~ therapistIDs).all()
        // A therapist created without a name has their address as the profile's name: not shown.
        let therapistNames = Dictionary(
            names.filter { !$0.fullName.contains("@") }.map { ($0.$user.id, $0.fullName) },
            uniquingKeysWith: { first, _ in first })
        let studyIDs = Set(shown.compactMap { $0.target.flatMap(Self.studyID(in:)) })
        let studies = try await StudyRecord.query(on: database).filter(\.$id ~~ studyIDs).all()
        let studiesByID = Dictionary(studies.map { ($0.id!, $0) }, uniquingKeysWith: { first, _ in first })
        let entries = shown.map { event in
            Entry(
                id: event.id!, occurredAt: event.occurredAt, action: event.action, actorRole: event.actorRole,
                therapistName: therapistNames[event.actorID],
                study: event.target.flatMap(Self.studyID(in:)).flatMap { studiesByID[$0] })
        }
        return Page(entries: entries, next: events.count > limit ? shown.last.map(AuditReader.Cursor.init) : nil)
    }

    /// The study an audit target names: `study:<id>` or `study:<id>:…`.
    static func studyID(in target: String) -> UUID? {
        let parts = target.split(separator: ":")
        guard parts.count >= 2, parts[0] == "study" else { return nil }
        return UUID(uuidString: String(parts[1]))
    }
}
