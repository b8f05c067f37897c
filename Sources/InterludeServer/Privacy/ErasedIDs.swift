import Crypto
import Fluent
import Foundation
import InterludeCore
import SQLKit

/// The keyed hashes of erased ids: written by every erasure, asked before an upload is taken, listed for an
/// operator, and applied again to a database restored from a backup taken before the erasure.
struct ErasedIDs: Sendable {
    let database: any Database
    let services: AppServices

    /// One erased id as `interlude erasures list` prints it and `interlude erasures apply` reads it.
    struct Entry: Sendable, Equatable {
        var erasureID: UUID
        var erasedAt: Date
        var scope: ErasureScope
        var role: Role
        var studyID: UUID?
        var table: String
        var digest: String
    }

    static func text(_ id: UUID) -> String { id.lowercasedText }

    /// Stores the hashes of what an erasure removed.
    func remember(_ removed: [String: [UUID]], erasure: UUID, key: SymmetricKey) async throws {
        let rows = removed.sorted { $0.key < $1.key }.flatMap { table, ids in
            ids.map {
                ErasedIDRecord(erasureID: erasure, table: table, digest: ServerSecret.digest(Self.text($0), with: key))
            }
        }
        for batch in rows.batches() { try await Array(batch).create(on: database) }
    }

    /// Whether any of `ids` was erased.
    func containsAny(_ ids: [UUID]) async throws -> Bool {
        guard !ids.isEmpty else { return false }
        let key = try await services.serverSecret.key(on: database, now: services.clock.now)
        let digests = ids.map { ServerSecret.digest(Self.text($0), with: key) }
        return try await ErasedIDRecord.query(on: database).filter(\.$digest ~~ digests).first() != nil
    }

    /// Refuses an upload that names an erased id.
    func refuse(_ ids: UUID?...) async throws {
        if try await containsAny(ids.compactMap { $0 }) { throw AppError.erased }
    }

    /// Every erased id of erasures at or after `since`, oldest first.
    func list(since: Date) async throws -> [Entry] {
        let erasures = try await ErasureRecord.query(on: database).filter(\.$erasedAt >= since).sort(\.$erasedAt).with(
            \.$erasedIDs
        ).all()
        return erasures.flatMap { erasure in
            erasure.erasedIDs.sorted { ($0.table, $0.digest) < ($1.table, $1.digest) }.map {
                Entry(
                    erasureID: erasure.id!, erasedAt: erasure.erasedAt, scope: erasure.scope, role: erasure.role,
                    studyID: erasure.$study.id, table: $0.table, digest: $0.digest)
            }
        }
    }
}

extension ErasedIDs.Entry {
    static let header = "# interlude erasures 1: erased_at erasure scope role study table digest"

    /// One tab-separated line.
    var line: String {
        [
            Date.ISO8601FormatStyle().format(erasedAt), ErasedIDs.text(erasureID), scope.rawValue, role.rawValue,
            studyID.map(ErasedIDs.text) ?? "-", table, digest,
        ].joined(separator: "\t")
    }

    /// Reads a line `line` wrote; nil for anything else.
    init?(line: Substring) {
        let parts = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 7, let erasedAt = try? Date(parts[0], strategy: .iso8601),
            let erasureID = UUID(uuidString: parts[1]), let scope = ErasureScope(rawValue: parts[2]),
            let role = Role(rawValue: parts[3]), !parts[5].isEmpty, parts[6].count == 64
        else { return nil }
        self.init(
            erasureID: erasureID, erasedAt: erasedAt, scope: scope, role: role, studyID: UUID(uuidString: parts[4]),
            table: parts[5], digest: parts[6])
    }
}
