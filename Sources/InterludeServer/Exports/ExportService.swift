import Fluent
import Foundation
import InterludeCore
import SQLKit
import ZIPFoundation

/// Research exports: asked for by a member who may export, written in the background by whichever process runs
/// the export job, kept for download for the configured number of days.
package struct ExportService: Sendable {
    let database: any Database
    let services: AppServices

    package init(database: any Database, services: AppServices) {
        self.database = database
        self.services = services
    }

    private var now: Date { services.clock.now }
    private var files: ExportFiles { ExportFiles(services: services) }
    private var store: any FileStore { services.files(on: database) }

    /// The zip's name when downloaded.
    static func fileName(of id: UUID) -> String { "interlude-export-\(id.lowercasedText.prefix(8)).zip" }

    static let withdrawnAfterErasure = "Removed: a participant in it deleted their account."
    /// How long a run holds an export without reporting progress before another may start it over.
    static let lease: TimeInterval = 120

    /// Queues an export of the study (of what changed after `since`, when given) and records who asked for it.
    package func start(_ scope: StudyExportScope, since: Date?) async throws -> ExportRecord {
        if let since, since > now { throw AppError.field("since", .outOfRange) }
        let participants = try await scope.participants()
        let export = ExportRecord(
            studyID: scope.grant.studyID, requestedBy: try scope.grant.viewer.requireID(), since: since, now: now)
        try await export.create(on: database)
        try await scope.record(.exportRequested, export: export.id!, since: since, patients: participants.map(\.id))
        return export
    }

    /// An export of a study the grant may export.
    func export(_ id: UUID, in scope: StudyExportScope) async throws -> ExportRecord {
        guard let export = try await ExportRecord.find(id, on: database), export.$study.id == scope.grant.studyID else {
            throw AppError.notFound
        }
        return export
    }

    /// The study's exports, newest first.
    func history(of scope: StudyExportScope, limit: Int? = 50) async throws -> [ExportRecord] {
        let query = ExportRecord.query(on: database).filter(\.$study.$id == scope.grant.studyID).sort(
            \.$createdAt, .descending)
        if let limit { query.limit(limit) }
        return try await query.all()
    }

    /// The study an export belongs to, for finding the caller's standing in it.
    func studyID(of exportID: UUID) async throws -> UUID {
        guard let export = try await ExportRecord.find(exportID, on: database) else { throw AppError.notFound }
        return export.$study.id
    }

    /// The finished zip, as it is read from the file store, recording the download; refused while it is still being
    /// written or after it expired.
    func download(_ id: UUID, in scope: StudyExportScope) async throws -> StoredBytes {
        let export = try await export(id, in: scope)
        guard export.status == .ready, let bytes = try await store.read(.export(id)) else {
            throw AppError.conflict(.exportNotReady)
        }
        let patients = try await ExportParticipantRecord.query(on: database).filter(\.$export.$id == id).all(
            \.$patient.$id)
        try await scope.record(.exportDownloaded, export: id, since: export.since, patients: patients)
        return bytes
    }

    // MARK: The job

    /// Writes every export that waits, or whose run stopped reporting; returns how many it finished.
    func runPending() async throws -> Int {
        var finished = 0
        while let claim = try await claimNext() {
            try await run(claim.export, claim: claim.token)
            finished += 1
        }
        return finished
    }

    /// Writes one export now, in this process, telling `observe` its progress; answers the finished record.
    package func write(_ id: UUID, observe: @escaping @Sendable (Int) -> Void) async throws -> ExportRecord {
        guard let claim = try await claim(id) else { throw AppError.conflict(.exportNotReady) }
        try await run(claim.export, claim: claim.token, observe: observe)
        guard let export = try await ExportRecord.find(id, on: database) else { throw AppError.notFound }
        return export
    }

    /// Removes the files of exports past their retention.
    func sweep() async throws -> Int {
        let past = try await ExportRecord.query(on: database).filter(\.$status == .ready).filter(\.$expiresAt <= now)
            .all()
        for export in past {
            guard
                try await database.updateRow(
                    ExportRecord.schema, id: export.id!, set: ["status": SQLBind(ExportStatus.expired.rawValue)],
                    if: { $0.where("status", .equal, SQLBind(ExportStatus.ready.rawValue)) })
            else { continue }
            await store.remove([.export(export.id!)])
        }
        return past.count
    }

    private func claimNext() async throws -> (export: ExportRecord, token: UUID)? {
        let candidates = try await ExportRecord.query(on: database).group(.or) { either in
            either.filter(\.$status == .queued)
            either.group(.and) { stale in stale.filter(\.$status == .running).filter(\.$claimedUntil < now) }
        }.sort(\.$createdAt).limit(5).all()
        for export in candidates {
            if let claimed = try await claim(export.requireID()) { return claimed }
        }
        return nil
    }

    /// Takes export `id` when it waits or its run stopped reporting.
    private func claim(_ id: UUID) async throws -> (export: ExportRecord, token: UUID)? {
        let token = UUID()
        let claimed = try await database.updateRow(
            ExportRecord.schema, id: id,
            set: [
                "status": SQLBind(ExportStatus.running.rawValue), "claimed_by": SQLBind(token),
                "claimed_until": SQLBind(now.addingTimeInterval(Self.lease)), "progress": SQLBind(0),
            ],
            if: { builder in
                builder.where { either in
                    either.where("status", .equal, SQLBind(ExportStatus.queued.rawValue))
                        .orWhere { stale in
                            stale.where("status", .equal, SQLBind(ExportStatus.running.rawValue))
                                .where("claimed_until", .lessThan, SQLBind(now))
                        }
                }
            })
        guard claimed, let export = try await ExportRecord.find(id, on: database) else { return nil }
        return (export, token)
    }

    /// One run: the files, the zip beside them, renamed into place when whole, then the record says ready.
    private func run(_ export: ExportRecord, claim token: UUID, observe: (@Sendable (Int) -> Void)? = nil) async throws
    {
        let id = try export.requireID()
        do {
            guard let requesterID = export.$requestedBy.id,
                let requester = try await UserRecord.find(requesterID, on: database)
            else { throw AppError.forbidden(.notAllowed) }
            let grant = try await StudyAccess(database: database, services: services)
                .require(.exportData, in: export.$study.id, by: requester)
            let scope = try StudyExportScope(grant, database: database)
            let work = try files.prepare(id)
            let package = ExportPackage(
                database: database, services: services, scope: scope, exportID: id, since: export.since, directory: work
            ) { share in
                let progress = Int((share * 90).rounded(.down))
                observe?(progress)
                try await report(id, token: token, progress: progress)
            }
            let (counts, paths, participants) = try await package.write()
            try zip(paths, from: work, to: files.partialZip(id))
            observe?(95)
            try await report(id, token: token, progress: 99)
            try await ExportParticipantRecord.query(on: database).filter(\.$export.$id == id).delete()
            try await participants.map {
                ExportParticipantRecord(exportID: id, patientID: $0.id, pseudonym: $0.pseudonym)
            }
            .create(on: database)
            let size =
                (try FileManager.default.attributesOfItem(atPath: files.partialZip(id).path)[.size] as? NSNumber)?
                .int64Value ?? 0
            try await store.put(.export(id), from: files.partialZip(id))
            files.removeWork(id)
            // Nothing to undo when another run took it over: that run writes the same files and marks it.
            _ = try await database.updateRow(
                ExportRecord.schema, id: id,
                set: [
                    "status": SQLBind(ExportStatus.ready.rawValue), "progress": SQLBind(100),
                    "participants": SQLBind(counts.participants),
                    "prompts": SQLBind(counts.prompts), "responses": SQLBind(counts.responses),
                    "finished_at": SQLBind(now),
                    "expires_at": SQLBind(
                        now.addingTimeInterval(Double(services.settings.exportRetentionDays) * 86_400)),
                    "size": SQLBind(size), "claimed_until": SQLBind(Date?.none),
                ],
                if: { $0.where("claimed_by", .equal, SQLBind(token)) })
        } catch is LostClaim {
            return
        } catch {
            files.removeWork(id)
            let held = try await database.updateRow(
                ExportRecord.schema, id: id,
                set: [
                    "status": SQLBind(ExportStatus.failed.rawValue), "error": SQLBind(Self.describe(error)),
                    "finished_at": SQLBind(now),
                    "claimed_until": SQLBind(Date?.none),
                ],
                if: { $0.where("claimed_by", .equal, SQLBind(token)) })
            // The stored zip is this run's only while it holds the export; another run's stays.
            if held { await store.remove([.export(id)]) }
        }
    }

    /// Another run took the export over; this one stops and leaves the files to it.
    private struct LostClaim: Error {}

    private func report(_ id: UUID, token: UUID, progress: Int) async throws {
        let held = try await database.updateRow(
            ExportRecord.schema, id: id,
            set: [
                "progress": SQLBind(min(progress, 99)), "claimed_until": SQLBind(now.addingTimeInterval(Self.lease)),
            ],
            if: { $0.where("claimed_by", .equal, SQLBind(token)) })
        if !held { throw LostClaim() }
    }

    private func zip(_ paths: [String], from directory: URL, to url: URL) throws {
        try? FileManager.default.removeItem(at: url)
        let archive = try Archive(url: url, accessMode: .create)
        for path in paths {
            try archive.addEntry(with: path, relativeTo: directory, compressionMethod: .deflate)
        }
    }

    private static func describe(_ error: any Error) -> String {
        switch error {
        case AppError.forbidden, AppError.notFound: "The person who asked for it may no longer export this study."
        default: "The export could not be written (\(String(describing: error).prefix(200)))."
        }
    }
}
