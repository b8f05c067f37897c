import Foundation
import GRDB
import InterludeCore

/// What the sync engine does to the store.
extension OfflineStore {
    var cursor: (cursor: String?, etag: String?) {
        get throws {
            try database.read { db in
                (
                    try String.fetchOne(db, sql: "SELECT value FROM sync_state WHERE key = 'cursor'"),
                    try String.fetchOne(db, sql: "SELECT value FROM sync_state WHERE key = 'etag'")
                )
            }
        }
    }

    /// Takes in what the server sent: a full picture replaces what the device held, changes are merged, tombstones
    /// remove. Changes still waiting to be sent are shown on top again.
    func apply(_ changes: ServerChanges, etag: String) throws {
        try database.write { db in
            if changes.full {
                for table in ["prompt", "appointment", "intervention", "record"] {
                    try db.execute(sql: "DELETE FROM \(table)")
                }
            }
            for prompt in changes.prompts { try save(prompt, db) }
            for definition in changes.instruments {
                try db.execute(
                    sql: "INSERT OR REPLACE INTO definition (key, version, body) VALUES (?, ?, ?)",
                    arguments: [definition.key, definition.version, try JSONEncoder().encode(definition)])
            }
            for appointment in changes.appointments { try save(appointment, db) }
            for intervention in changes.interventions { try save(intervention, db) }
            for record in changes.records { try save(record, db) }
            for tombstone in changes.deleted { try drop(tombstone, db) }
            try db.execute(
                sql: "INSERT OR REPLACE INTO sync_state (key, value) VALUES ('cursor', ?)", arguments: [changes.cursor])
            try db.execute(sql: "INSERT OR REPLACE INTO sync_state (key, value) VALUES ('etag', ?)", arguments: [etag])
            for pending in try pending(db) { try applyLocally(pending.change, db) }
        }
    }

    /// Takes the server's answers to sent changes: applied and answered ones leave the outbox, conflicts and refusals
    /// are kept for the person, erased data goes from the device, and changes held for a consent answer stay.
    func settle(_ outcomes: [(PendingChange, ChangeOutcome)]) throws {
        try database.write { db in
            for (pending, outcome) in outcomes {
                if case .waiting = outcome { continue }
                try db.execute(sql: "DELETE FROM outbox WHERE id = ?", arguments: [pending.id.uuidString])
                switch outcome {
                case .applied, .waiting:
                    if case .response(let response) = pending.change {
                        try db.execute(
                            sql: "DELETE FROM draft WHERE prompt_id = ?", arguments: [response.promptID.uuidString])
                    }
                case .conflict(let server):
                    let conflict = SyncConflict(id: pending.id, local: pending.change, server: server)
                    try db.execute(
                        sql: "INSERT OR REPLACE INTO conflict (id, body) VALUES (?, ?)",
                        arguments: [pending.id.uuidString, try sealer.seal(conflict)])
                    switch server {
                    case .appointment(let appointment): try save(appointment, db)
                    case .record(let record): try save(record, db)
                    case .deleted: try forget(pending.change, db)
                    }
                case .rejected(let problem):
                    // Paradata the server cannot use is no concern of the person's.
                    if case .notification = pending.change { continue }
                    try db.execute(
                        sql: "INSERT OR REPLACE INTO refusal (id, body) VALUES (?, ?)",
                        arguments: [pending.id.uuidString, try sealer.seal(Refusal(change: pending, problem: problem))])
                case .erased:
                    try forget(pending.change, db)
                }
            }
        }
    }

    /// Removes a conflict once the app has settled it.
    func removeConflict(_ id: UUID) throws {
        try database.write { db in try db.execute(sql: "DELETE FROM conflict WHERE id = ?", arguments: [id.uuidString])
        }
    }

    func save(_ prompt: Prompt, _ db: GRDB.Database) throws {
        try db.execute(
            sql: "INSERT OR REPLACE INTO prompt (id, closes_at, body) VALUES (?, ?, ?)",
            arguments: [prompt.id.uuidString, prompt.closesAt, try JSONEncoder().encode(prompt)])
    }

    func save(_ appointment: Appointment, _ db: GRDB.Database) throws {
        try db.execute(
            sql: "INSERT OR REPLACE INTO appointment (id, starts_at, body) VALUES (?, ?, ?)",
            arguments: [appointment.id.uuidString, appointment.startsAt, try sealer.seal(appointment)])
    }

    func save(_ intervention: Intervention, _ db: GRDB.Database) throws {
        try db.execute(
            sql: "INSERT OR REPLACE INTO intervention (id, sent_at, body) VALUES (?, ?, ?)",
            arguments: [intervention.id.uuidString, intervention.sentAt, try sealer.seal(intervention)])
    }

    func save(_ record: HealthRecord, _ db: GRDB.Database) throws {
        try db.execute(
            sql: "INSERT OR REPLACE INTO record (kind, id, body) VALUES (?, ?, ?)",
            arguments: [record.kind.rawValue, record.id.uuidString, try sealer.seal(record)])
    }

    func drop(_ tombstone: Tombstone, _ db: GRDB.Database) throws {
        let id = tombstone.id.uuidString
        switch tombstone.entity {
        case .prompt:
            try db.execute(sql: "DELETE FROM prompt WHERE id = ?", arguments: [id])
            try db.execute(sql: "DELETE FROM draft WHERE prompt_id = ?", arguments: [id])
        case .appointment:
            try db.execute(sql: "DELETE FROM appointment WHERE id = ?", arguments: [id])
        case .event, .therapy, .audiogram, .mood, .thought, .thoughtOccurrence:
            try db.execute(
                sql: "DELETE FROM record WHERE kind = ? AND id = ?", arguments: [tombstone.entity.rawValue, id])
        }
    }

    /// Removes the device's copy of what a change is about: the server no longer has it.
    func forget(_ change: Change, _ db: GRDB.Database) throws {
        switch change {
        case .response(let response): try drop(Tombstone(entity: .prompt, id: response.promptID), db)
        case .createAppointment(let id, _), .updateAppointment(let id, _, _), .deleteAppointment(let id, _):
            try drop(Tombstone(entity: .appointment, id: id), db)
        case .createRecord(let kind, let id, _), .updateRecord(let kind, let id, _, _),
            .deleteRecord(let kind, let id, _):
            try db.execute(
                sql: "DELETE FROM record WHERE kind = ? AND id = ?", arguments: [kind.rawValue, id.uuidString])
        case .interventionSeen(let id), .interventionCompleted(let id):
            try db.execute(sql: "DELETE FROM intervention WHERE id = ?", arguments: [id.uuidString])
        case .notification: return
        }
    }

    /// Shows a change waiting to be sent as if the server had taken it.
    func applyLocally(_ change: Change, _ db: GRDB.Database) throws {
        switch change {
        case .response(let response):
            guard
                var prompt = try Data.fetchOne(
                    db, sql: "SELECT body FROM prompt WHERE id = ?", arguments: [response.promptID.uuidString]
                )
                .map({ try JSONDecoder().decode(Prompt.self, from: $0) })
            else { return }
            prompt.status = .completed
            prompt.completedAt = response.completedAt
            prompt.responseID = response.id
            try save(prompt, db)
        case .createAppointment(let id, let draft):
            let existing = try appointment(id, db)
            try save(
                Appointment(
                    id: id, title: draft.title, startsAt: draft.startsAt, endsAt: draft.endsAt, comment: draft.comment,
                    timeZone: existing?.timeZone ?? TimeZone.current.identifier, version: existing?.version ?? 0,
                    bookedBy: existing?.bookedBy ?? .patient), db)
        case .updateAppointment(let id, _, let draft):
            guard var appointment = try appointment(id, db) else { return }
            appointment.title = draft.title
            appointment.startsAt = draft.startsAt
            appointment.endsAt = draft.endsAt
            appointment.comment = draft.comment
            try save(appointment, db)
        case .deleteAppointment(let id, _):
            try drop(Tombstone(entity: .appointment, id: id), db)
        case .interventionSeen(let id), .interventionCompleted(let id):
            guard
                var intervention = try Data.fetchOne(
                    db, sql: "SELECT body FROM intervention WHERE id = ?", arguments: [id.uuidString]
                )
                .map({ try sealer.open($0, as: Intervention.self) })
            else { return }
            if case .interventionCompleted = change {
                intervention.state = .completed
            } else if intervention.state == .sent {
                intervention.state = .seen
            }
            try save(intervention, db)
        case .createRecord(let kind, _, let body), .updateRecord(let kind, _, _, let body):
            if let record = try? HealthRecord(kind: kind, body: body) { try save(record, db) }
        case .deleteRecord(let kind, let id, _):
            try db.execute(
                sql: "DELETE FROM record WHERE kind = ? AND id = ?", arguments: [kind.rawValue, id.uuidString])
        case .notification:
            return
        }
    }

    private func appointment(_ id: UUID, _ db: GRDB.Database) throws -> Appointment? {
        try Data.fetchOne(db, sql: "SELECT body FROM appointment WHERE id = ?", arguments: [id.uuidString])
            .map { try sealer.open($0, as: Appointment.self) }
    }
}
