import Fluent
import Foundation
import InterludeCore
import OpenAPIRuntime
import SQLKit

/// Imports of samples from files a person uploads: received in parts so a broken upload resumes (on any server),
/// kept in the file store until read, then read in the background as a stream by whichever process runs the job,
/// keeping only the types the person enabled inside the study's window.
package struct HealthImportService: Sendable {
    let database: any Database
    let services: AppServices

    package init(database: any Database, services: AppServices) {
        self.database = database
        self.services = services
    }
    /// What one person may upload in a day, all imports together.
    var dailyQuota = Self.standardDailyQuota

    /// The largest file taken: an Apple Health export of several years is a few gigabytes unpacked, far less zipped.
    static let sizeLimit = 1 << 30
    static let standardDailyQuota = 2 << 30
    /// Imports of different people read side by side, a batch of each in turn.
    static let readingTogether = 4
    private var now: Date { services.clock.now }
    private var store: any FileStore { services.files(on: database) }
    /// How long a run holds an import without reporting a batch before another may take it over.
    static let lease: TimeInterval = 120

    /// An upload that received nothing for this long is given up and its part removed.
    static let abandonedAfter: TimeInterval = 86_400

    /// Starts an import with the file or its first part; `size` announces the whole when more parts follow. A person
    /// has one import at a time on the server's disk: an unfinished upload of theirs is given up for the new one,
    /// and while a complete one waits to be read a new one is refused.
    func start(_ format: HealthImportRecord.Format, size: Int?, body: HTTPBody, by patientID: UUID) async throws
        -> HealthImportRecord
    {
        if let size, size > Self.sizeLimit { throw AppError.field("Upload-Length", .outOfRange, limit: Self.sizeLimit) }
        try await requireQuota(size ?? 1, of: patientID, besides: nil)
        let unfinished = try await HealthImportRecord.query(on: database).filter(\.$patient.$id == patientID)
            .filter(\.$status ~~ [.receiving, .waiting, .reading]).all()
        if unfinished.contains(where: { $0.status != .receiving }) { throw AppError.conflict(.importUnderWay) }
        try await giveUp(unfinished, problem: "replaced by a new upload")
        let record = HealthImportRecord(id: UUID(), patientID: patientID, format: format, size: size, now: now)
        try await store.create(.healthImport(try record.requireID()))
        try await record.create(on: database)
        return try await receive(body, into: record)
    }

    /// Appends the next part, which must start where the server stopped.
    func append(_ id: UUID, offset: Int, body: HTTPBody, by patientID: UUID) async throws -> HealthImportRecord {
        let record = try await find(id, of: patientID)
        guard record.status == .receiving, offset == record.received else { throw AppError.conflict(.uploadOffset) }
        try await requireQuota(1, of: patientID, besides: record.id)
        return try await receive(body, into: record)
    }

    /// Refuses, with when to try again, an upload of `bytes` more that would take the person past the day's quota.
    private func requireQuota(_ bytes: Int, of patientID: UUID, besides importID: UUID?) async throws {
        let (used, oldest) = try await usedToday(by: patientID, besides: importID)
        guard used + bytes > dailyQuota else { return }
        let free = oldest.map { $0.addingTimeInterval(86_400).timeIntervalSince(now) } ?? 86_400
        throw AppError.rateLimited(retryAfter: max(Int(free.rounded(.up)), 1))
    }

    /// The bytes the person's imports of the last day received, but `importID`'s, and when the oldest began.
    private func usedToday(by patientID: UUID, besides importID: UUID?) async throws -> (bytes: Int, oldest: Date?) {
        let recent = try await HealthImportRecord.query(on: database).filter(\.$patient.$id == patientID)
            .filter(\.$createdAt > now.addingTimeInterval(-86_400)).all().filter { $0.id != importID }
        return (recent.reduce(0) { $0 + $1.received }, recent.map(\.createdAt).min())
    }

    func find(_ id: UUID, of patientID: UUID) async throws -> HealthImportRecord {
        guard let record = try await HealthImportRecord.find(id, on: database), record.$patient.id == patientID else {
            throw AppError.notFound
        }
        return record
    }

    /// Writes a part to the stored file as it arrives; whatever arrived before the connection broke counts as
    /// received. What an earlier part stored beyond what its record says (its server stopped before saying it) is
    /// cut first.
    private func receive(_ body: HTTPBody, into record: HealthImportRecord) async throws -> HealthImportRecord {
        let id = try record.requireID()
        let quota = dailyQuota - (try await usedToday(by: record.$patient.id, besides: id).bytes)
        let limit = min(record.size ?? Self.sizeLimit, quota)
        let file = StoredFile.healthImport(id)
        try await store.truncate(file, to: Int64(record.received))
        let appender = try await store.appender(file, at: Int64(record.received))
        var arrived = record.received
        var failure: (any Error)?
        do {
            for try await chunk in body {
                guard arrived + chunk.count <= limit else { throw AppError.field("body", .tooLong, limit: limit) }
                try await appender.write(chunk)
                arrived += chunk.count
            }
        } catch {
            failure = error
        }
        let received = record.received + Int(try await appender.finish())
        record.received = received
        record.updatedAt = now
        if failure == nil, record.size == nil || record.size == received {
            record.size = received
            record.status = received > 0 ? .waiting : .failed
            if received == 0 { record.problem = "empty" }
        }
        try await record.save(on: database)
        if let failure { throw failure }
        return record
    }

    /// Gives up uploads that received nothing since `idleSince`; how many.
    func abandon(idleSince: Date) async throws -> Int {
        let idle = try await HealthImportRecord.query(on: database).filter(\.$status == .receiving).filter(
            \.$updatedAt < idleSince
        ).all()
        try await giveUp(idle, problem: "abandoned: nothing received for a day")
        return idle.count
    }

    /// Marks unfinished uploads failed and removes what they received.
    private func giveUp(_ imports: [HealthImportRecord], problem: String) async throws {
        for record in imports {
            record.status = .failed
            record.problem = problem
            record.finishedAt = now
            record.updatedAt = now
            try await record.save(on: database)
        }
        await store.remove(try imports.map { .healthImport(try $0.requireID()) })
    }

    /// Reads the imports that wait, and any whose run stopped reporting (its process was killed): the oldest of each
    /// person, up to `readingTogether` people side by side and a batch of each in turn, so one person's large file
    /// holds nobody else's back. Each is claimed for a lease first, so two processes never read the same one; a run
    /// that takes one over skips the batches the stopped run counted. Answers how many were read.
    func runPending() async throws -> Int {
        var read = 0
        while true {
            let pending = try await HealthImportRecord.query(on: database)
                .group(.or) { either in
                    either.filter(\.$status == .waiting)
                    either.group(.and) { $0.filter(\.$status == .reading).filter(\.$claimedUntil < now) }
                }
                .sort(\.$createdAt).all()
            var people: Set<UUID> = []
            var readings: [Reading] = []
            for record in pending
            where people.insert(record.$patient.id).inserted && readings.count < Self.readingTogether {
                if let reading = try await start(record) { readings.append(reading) }
            }
            guard !readings.isEmpty else { return read }
            read += readings.count
            while !readings.isEmpty {
                var next: [Reading] = []
                for reading in readings {
                    if try await !step(reading) { next.append(reading) }
                }
                readings = next
            }
        }
    }

    /// Reads one import into the person's samples, alone; the file goes once read, whatever came of it. Answers the
    /// import as it ended; nil when another run holds it.
    package func read(_ record: HealthImportRecord) async throws -> HealthImportRecord? {
        guard let reading = try await start(record) else { return nil }
        while try await !step(reading) {}
        return reading.record
    }

    /// An import being read: its file handed over a batch at a time by a thread that reads a local copy.
    final class Reading {
        let record: HealthImportRecord
        let claim: UUID
        let local: LocalCopy
        let handOff: BatchHandOff
        var items: AsyncStream<BatchHandOff.Item>.Iterator
        /// Batches an earlier run counted already, passed over.
        var skip: Int
        var problem: String?
        /// Another run took the import over; this one stops and leaves everything to it.
        var lost = false

        init(record: HealthImportRecord, claim: UUID, local: LocalCopy, handOff: BatchHandOff) {
            self.record = record
            self.claim = claim
            self.local = local
            self.handOff = handOff
            items = handOff.items.makeAsyncIterator()
            skip = record.batches
        }
    }

    /// Claims the import, fetches a copy of its file and starts reading it; nil when another run holds it.
    private func start(_ record: HealthImportRecord) async throws -> Reading? {
        let id = try record.requireID()
        let claim = UUID()
        let claimed = try await database.updateRow(
            HealthImportRecord.schema, id: id,
            set: [
                "status": SQLBind(HealthImportRecord.Status.reading.rawValue), "claimed_by": SQLBind(claim),
                "claimed_until": SQLBind(now.addingTimeInterval(Self.lease)),
            ],
            if: { builder in
                builder.where { either in
                    either.where("status", .equal, SQLBind(HealthImportRecord.Status.waiting.rawValue))
                        .orWhere { stale in
                            stale.where("status", .equal, SQLBind(HealthImportRecord.Status.reading.rawValue))
                                .where("claimed_until", .lessThan, SQLBind(now))
                        }
                }
            })
        guard claimed, let current = try await HealthImportRecord.find(id, on: database) else { return nil }
        let local = try await store.local(.healthImport(id))
        let source = HealthImportSource(format: current.format, file: local.url, size: current.received)
        let reading = Reading(record: current, claim: claim, local: local, handOff: BatchHandOff())
        source.start(into: reading.handOff)
        return reading
    }

    /// Stores the import's next batch; true once the file is read, whatever came of it, and the file is gone.
    private func step(_ reading: Reading) async throws -> Bool {
        let record = reading.record
        switch await reading.items.next() {
        case .batch(let raws, let read, let otherRecords):
            guard reading.skip == 0 else {
                reading.skip -= 1
                reading.handOff.acknowledge()
                return false
            }
            do {
                let result = try await SampleService(database: database, services: services).ingest(
                    raws, for: record.$patient.id)
                record.count(result, otherRecords: otherRecords)
                record.read = read
                record.batches += 1
                guard try await report(record, claim: reading.claim) else {
                    reading.lost = true
                    reading.handOff.cancel()
                    return false
                }
                reading.handOff.acknowledge()
            } catch {
                reading.handOff.cancel()
                reading.problem = String(describing: error)
            }
            return false
        case .finished(let failure):
            reading.problem = reading.problem ?? failure
            return false
        case nil:
            reading.local.release()
            guard !reading.lost else { return true }
            let problem = reading.problem
            record.status = problem == nil ? .done : .failed
            record.problem = problem.map { String($0.prefix(500)) }
            if problem == nil { record.read = record.received }
            record.finishedAt = now
            if try await report(record, claim: reading.claim) {
                await store.remove([.healthImport(try record.requireID())])
            }
            return true
        }
    }

    /// Saves what the run counted, and renews its lease, while the run still holds the import; false when another
    /// took it over.
    private func report(_ record: HealthImportRecord, claim: UUID) async throws -> Bool {
        record.updatedAt = now
        return try await database.updateRow(
            HealthImportRecord.schema, id: try record.requireID(),
            set: [
                "status": SQLBind(record.status.rawValue), "read": SQLBind(record.read),
                "stored": SQLBind(record.stored),
                "duplicates": SQLBind(record.duplicates), "skipped_not_enabled": SQLBind(record.skippedNotEnabled),
                "skipped_outside_window": SQLBind(record.skippedOutsideWindow),
                "skipped_invalid": SQLBind(record.skippedInvalid),
                "skipped_other_types": SQLBind(record.skippedOtherTypes), "problem": SQLBind(record.problem),
                "finished_at": SQLBind(record.finishedAt), "batches": SQLBind(record.batches),
                "updated_at": SQLBind(now),
                "claimed_until": SQLBind(record.finishedAt == nil ? now.addingTimeInterval(Self.lease) : nil),
            ],
            if: { $0.where("claimed_by", .equal, SQLBind(claim)) })
    }
}

extension HealthImportRecord {
    /// Adds what became of a batch to the import's counts.
    func count(_ result: SampleService.Ingested, otherRecords: Int) {
        stored += result.stored
        duplicates += result.duplicates
        skippedOtherTypes += otherRecords
        for (_, errors) in result.rejected {
            if errors.contains(where: { $0.code == .duplicate }) {
                duplicates += 1
            } else if errors.contains(where: { $0.code == .notAllowed }) {
                skippedNotEnabled += 1
            } else if errors.contains(where: { $0.code == .outsideWindow }) {
                skippedOutsideWindow += 1
            } else {
                skippedInvalid += 1
            }
        }
    }
}
