import Fluent
import Foundation
import InterludeCore

/// Erasure applied again to a database restored from a backup taken before it: the tombstones it lacks are
/// stored, the accounts and the study data they name are erased once more, and any other row whose id they name
/// is deleted.
struct ErasureReplay: Sendable {
    let database: any Database
    let services: AppServices

    struct Outcome: Sendable, Equatable {
        var tombstonesAdded = 0
        var accounts = 0
        var studyData = 0
        var rows = 0
    }

    func apply(_ entries: [ErasedIDs.Entry]) async throws -> Outcome {
        var outcome = Outcome()
        outcome.tombstonesAdded = try await store(entries)
        let key = try await services.serverSecret.key(on: database, now: services.clock.now)
        var erased: [String: Set<String>] = [:]
        for row in try await ErasedIDRecord.query(on: database).all() {
            erased[row.table, default: []].insert(row.digest)
        }
        func named(_ id: UUID, in table: String) -> Bool {
            erased[table]?.contains(ServerSecret.digest(ErasedIDs.text(id), with: key)) == true
        }
        let erasure = ErasureService(database: database, services: services)
        for user in try await UserRecord.query(on: database).all()
        where named(try user.requireID(), in: UserRecord.schema) {
            try await erasure.erase(user, leavingTombstone: false)
            outcome.accounts += 1
        }
        for enrollment in try await EnrollmentRecord.query(on: database).with(\.$patient).with(\.$study).all()
        where named(try enrollment.requireID(), in: EnrollmentRecord.schema) {
            try await erasure.eraseStudyData(of: enrollment.patient, in: enrollment.study, leavingTombstone: false)
            outcome.studyData += 1
        }
        for table in ErasureMap.personalTables {
            let hits = try await Statements.rowIDs(of: table, on: database).filter { named($0, in: table) }
            for batch in hits.batches() { try await Statements.deleteRows(Array(batch), of: table, on: database) }
            outcome.rows += hits.count
        }
        return outcome
    }

    /// Stores the tombstones of `entries` that this database does not have yet; how many.
    private func store(_ entries: [ErasedIDs.Entry]) async throws -> Int {
        let known = Set(try await ErasureRecord.query(on: database).all(\._$id))
        let studies = Set(try await StudyRecord.query(on: database).all(\._$id))
        var added = 0
        for (erasureID, group) in Dictionary(grouping: entries, by: \.erasureID) where !known.contains(erasureID) {
            guard let first = group.first else { continue }
            try await database.atomically { database in
                try await ErasureRecord(
                    id: erasureID, role: first.role, scope: first.scope,
                    studyID: first.studyID.flatMap { studies.contains($0) ? $0 : nil },
                    erasedAt: first.erasedAt
                ).create(on: database)
                let rows = group.map { ErasedIDRecord(erasureID: erasureID, table: $0.table, digest: $0.digest) }
                for batch in rows.batches() { try await Array(batch).create(on: database) }
            }
            added += 1
        }
        return added
    }
}
