import Fluent
import Foundation
import InterludeCore
import Logging
import SQLKit
import ZIPFoundation

/// Where a copy is written on this machine before the file store takes it: `self-exports/<id>.work/` and the zip
/// beside it as `<id>.zip.partial`.
struct SelfExportFiles: Sendable {
    let directory: URL

    init(services: AppServices) {
        directory = URL(fileURLWithPath: services.settings.dataDirectory).appendingPathComponent("self-exports")
    }

    func partialZip(_ id: UUID) -> URL { directory.appendingPathComponent("\(id.lowercasedText).zip.partial") }
    func work(_ id: UUID) -> URL { directory.appendingPathComponent("\(id.lowercasedText).work") }

    func removeWork(_ id: UUID) {
        try? FileManager.default.removeItem(at: work(id))
        try? FileManager.default.removeItem(at: partialZip(id))
    }
}

/// A person's copy of their data (GDPR Art. 15 and 20): asked for in the app, written in the background, the
/// person told by notification and email when it is ready, downloadable once within a day.
struct SelfExportService: Sendable {
    let database: any Database
    let services: AppServices

    /// How long a ready copy waits for its one download.
    static let downloadWindow: TimeInterval = 24 * 3600
    /// How long a worker holds a copy it writes before another may take it over.
    static let lease: TimeInterval = 15 * 60

    private var now: Date { services.clock.now }
    private var files: SelfExportFiles { SelfExportFiles(services: services) }
    private var store: any FileStore { services.files(on: database) }

    /// Asks for a copy; a copy still being written is answered instead of a second one.
    func request(by user: UserRecord) async throws -> SelfExportRecord {
        let userID = try user.requireID()
        if let pending = try await SelfExportRecord.query(on: database).filter(\.$user.$id == userID)
            .filter(\.$status ~~ [ExportStatus.queued, .running]).first()
        {
            return pending
        }
        let record = SelfExportRecord(userID: userID, now: now)
        try await record.create(on: database)
        return record
    }

    /// The person's latest copy, if they asked for one.
    func latest(of user: UserRecord) async throws -> SelfExportRecord? {
        try await SelfExportRecord.query(on: database).filter(\.$user.$id == user.requireID())
            .sort(\.$createdAt, .descending).first()
    }

    /// Hands out the ready copy once: the first download takes it, later ones and late ones find it gone. The stored
    /// file goes once it was read.
    func download(by user: UserRecord) async throws -> StoredBytes {
        guard let record = try await latest(of: user) else { throw AppError.notFound }
        let id = try record.requireID()
        let taken = try await database.updateRow(
            SelfExportRecord.schema, id: id,
            set: ["downloaded_at": SQLBind(now), "status": SQLBind(ExportStatus.expired.rawValue)],
            if: {
                $0.where("status", .equal, SQLBind(ExportStatus.ready.rawValue)).where(
                    "downloaded_at", .is, SQLLiteral.null
                )
                .where("expires_at", .greaterThan, SQLBind(now))
            })
        guard taken, let bytes = try await store.read(.selfExport(id)) else { throw AppError.conflict(.exportNotReady) }
        let store = self.store
        return bytes.whenRead { await store.remove([.selfExport(id)]) }
    }

    /// Writes every copy that waits; answers how many were written.
    func runPending() async throws -> Int {
        var written = 0
        while let record = try await claimNext() {
            do {
                try await write(record)
                written += 1
            } catch {
                Logger(label: "interlude.self-export").error(
                    "A copy of a person's data failed: \(String(describing: error))")
                record.status = .failed
                record.finishedAt = now
                try await record.save(on: database)
                files.removeWork(try record.requireID())
                await store.remove([.selfExport(try record.requireID())])
            }
        }
        return written
    }

    /// Expires the copies left past their window and removes their files (a downloaded copy's file went with the
    /// download, a failed one's with the failure).
    func sweep() async throws -> Int {
        let past = try await SelfExportRecord.query(on: database).filter(\.$status == .ready).filter(
            \.$expiresAt <= now
        ).all()
        for record in past {
            record.status = .expired
            try await record.save(on: database)
            await store.remove([.selfExport(try record.requireID())])
        }
        return past.count
    }

    private func claimNext() async throws -> SelfExportRecord? {
        let candidates = try await SelfExportRecord.query(on: database)
            .group(.or) { either in
                either.filter(\.$status == .queued)
                either.group(.and) { $0.filter(\.$status == .running).filter(\.$claimedUntil < now) }
            }
            .sort(\.$createdAt).limit(5).all()
        for candidate in candidates {
            let id = try candidate.requireID()
            let claimed = try await database.updateRow(
                SelfExportRecord.schema, id: id,
                set: [
                    "status": SQLBind(ExportStatus.running.rawValue),
                    "claimed_until": SQLBind(now.addingTimeInterval(Self.lease)),
                ],
                if: { $0.where("status", .equal, SQLBind(candidate.status.rawValue)) })
            if claimed, let record = try await SelfExportRecord.find(id, on: database) { return record }
        }
        return nil
    }

    private func write(_ record: SelfExportRecord) async throws {
        let id = try record.requireID()
        guard let user = try await UserRecord.find(record.$user.id, on: database) else { throw AppError.notFound }
        let work = files.work(id)
        files.removeWork(id)
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        defer { files.removeWork(id) }
        let paths = try await SelfExportPackage(database: database, services: services, user: user).write(into: work)
        let zip = files.partialZip(id)
        do {
            // Closed at the end of the block, so the whole archive is on disk before the store reads it.
            let archive = try Archive(url: zip, accessMode: .create)
            for path in paths { try archive.addEntry(with: path, relativeTo: work, compressionMethod: .deflate) }
        }
        let size = (try FileManager.default.attributesOfItem(atPath: zip.path)[.size] as? NSNumber)?.intValue
        try await store.put(.selfExport(id), from: zip)
        try await deliver(record, size: size, to: user)
    }

    /// Marks the copy ready and tells the person, only while the request still waits: a person who deleted their
    /// account meanwhile took the request with it, and nothing of theirs is kept or sent. False then.
    @discardableResult
    func deliver(_ record: SelfExportRecord, size: Int?, to user: UserRecord) async throws -> Bool {
        let id = try record.requireID()
        record.status = .ready
        record.finishedAt = now
        record.expiresAt = now.addingTimeInterval(Self.downloadWindow)
        record.size = size
        let delivered = try await database.updateRow(
            SelfExportRecord.schema, id: id,
            set: [
                "status": SQLBind(ExportStatus.ready.rawValue), "finished_at": SQLBind(record.finishedAt),
                "expires_at": SQLBind(record.expiresAt), "size": SQLBind(record.size),
            ],
            if: { $0.where("status", .equal, SQLBind(ExportStatus.running.rawValue)) })
        guard delivered else {
            await store.remove([.selfExport(id)])
            return false
        }
        await tell(user, record)
        return true
    }

    /// A notification on the person's devices and an email: the copy is ready in the app, once, for a day. (Without
    /// a device the notification would only be a second email.)
    private func tell(_ user: UserRecord, _ record: SelfExportRecord) async {
        let localizer = services.localizer
        let language = user.language
        let title = localizer.text("selfExport.ready.title", language)
        let body = localizer.text("selfExport.ready.body", language)
        do {
            if try await DeviceRecord.query(on: database).filter(\.$user.$id == record.$user.id).count() > 0 {
                try await NotificationOutbox(database: database, localizer: localizer).enqueue(
                    [
                        .init(
                            userID: record.$user.id, category: .messages,
                            dedupeKey: "selfExport:\(try record.requireID().lowercasedText)",
                            title: title, body: body, path: "/app/my-data", dueAt: now,
                            expiresAt: record.expiresAt ?? now)
                    ],
                    now: now)
            }
            try await services.mailer.send(
                EmailComposer(localizer: localizer, publicURL: services.settings.publicURL)
                    .notification(
                        to: user.email, title: title, body: body, link: services.settings.publicURL + "/app/my-data",
                        language: language))
        } catch {
            Logger(label: "interlude.self-export").error(
                "The person could not be told their copy is ready: \(String(describing: error))")
        }
    }
}
