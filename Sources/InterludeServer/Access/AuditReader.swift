import Fluent
import Foundation
import InterludeCore

/// Reads the audit log for the admin.
struct AuditReader: Sendable {
    let database: any Database

    /// Where a page of the log ends: the time and id of its last event.
    struct Cursor: Sendable {
        let occurredAt: Date
        let id: UUID

        init(_ event: AuditEventRecord) {
            occurredAt = event.occurredAt
            id = event.id!
        }

        init?(_ text: String) {
            let parts = text.split(separator: "_")
            guard parts.count == 2, let seconds = Double(parts[0]), let id = UUID(uuidString: String(parts[1]))
            else { return nil }
            occurredAt = Date(timeIntervalSince1970: seconds)
            self.id = id
        }

        var text: String { "\(occurredAt.timeIntervalSince1970)_\(id.uuidString)" }
    }

    func events(actor: UUID?, patient: UUID?, before: Cursor?, limit: Int) async throws -> [AuditEventRecord] {
        var query = AuditEventRecord.query(on: database)
        if let actor { query = query.filter(\.$actorID == actor) }
        if let patient { query = query.filter(\.$subjectID == patient) }
        if let before {
            query = query.group(.or) { older in
                older.filter(\.$occurredAt < before.occurredAt)
                older.group(.and) { sameInstant in
                    sameInstant.filter(\.$occurredAt == before.occurredAt).filter(\.$id < before.id)
                }
            }
        }
        return try await query.sort(\.$occurredAt, .descending).sort(\.$id, .descending).limit(limit).all()
    }

    func patientID(forPseudonym pseudonym: String) async throws -> UUID? {
        try await PatientProfileRecord.query(on: database).filter(\.$pseudonym == pseudonym).first()?.$user.id
    }

    /// Actor emails and patient pseudonyms for the events shown; erased patients have none.
    func names(for events: [AuditEventRecord]) async throws -> (actors: [UUID: String], patients: [UUID: String]) {
        let actorIDs = Array(Set(events.map(\.actorID)))
        let patientIDs = Array(Set(events.compactMap(\.subjectID)))
        let actors = try await UserRecord.query(on: database).filter(\.$id ~~ actorIDs).all()
        let profiles = try await PatientProfileRecord.query(on: database).filter(\.$user.$id ~~ patientIDs).all()
        return (
            Dictionary(uniqueKeysWithValues: actors.map { ($0.id!, $0.email) }),
            Dictionary(uniqueKeysWithValues: profiles.map { ($0.$user.id, $0.pseudonym) })
        )
    }
}
