import Fluent
import Foundation
import InterludeCore
import OpenAPIRuntime

/// Where uploaded files wait until they are read.
struct HealthImportFiles: Sendable {
    let directory: URL

    init(services: AppServices) {
        directory = URL(fileURLWithPath: services.settings.dataDirectory).appendingPathComponent("health-imports")
    }

    func file(_ id: UUID) -> URL { directory.appendingPathComponent(id.lowercasedText) }

    /// The data directory refused a new file.
    struct Unwritable: Error, CustomStringConvertible {
        let path: String
        var description: String { "cannot create \(path)" }
    }

    /// An empty file for an import's bytes.
    func create(_ id: UUID) throws -> URL {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let url = file(id)
        guard FileManager.default.createFile(atPath: url.path, contents: nil) else { throw Unwritable(path: url.path) }
        return url
    }

    func remove(_ ids: [UUID]) {
        for id in ids { try? FileManager.default.removeItem(at: file(id)) }
    }
}

/// Imports of samples from files a person uploads: received in parts so a broken upload resumes, then read in the
/// background as a stream, keeping only the types the person enabled inside the study's window.
struct HealthImportService: Sendable {
    let database: any Database
    let services: AppServices
    /// What one person may upload in a day, all imports together.
    var dailyQuota = Self.standardDailyQuota

    /// The largest file taken: an Apple Health export of several years is a few gigabytes unpacked, far less zipped.
    static let sizeLimit = 1 << 30
    static let standardDailyQuota = 2 << 30
    /// Imports of different people read side by side, a batch of each in turn.
    static let readingTogether = 4
    private var now: Date { services.clock.now }
    private var files: HealthImportFiles { HealthImportFiles(services: services) }

    /// An upload that received nothing for this long is given up and its part removed.
    static let abandonedAfter: TimeInterval = 86_400

    /// Starts an import with the file or its first part; `size` announces the whole when more parts follow. A person
    /// has one import at a time on the server's disk: an unfinished upload of theirs is given up for the new one,
    /// and while a complete one waits to be read a new one is refused.
    func start(_ format: HealthImportRecord.Format, size: Int?, body: HTTPBody, by patientID: UUID) async throws -> HealthImportRecord {
        if let size, size > Self.sizeLimit { throw AppError.field("Upload-Length", .outOfRange, limit: Self.sizeLimit) }
        try await requireQuota(size ?? 1, of: patientID, besides: nil)
        let unfinished = try await HealthImportRecord.query(on: database).filter(\.$patient.$id == patientID)
            .filter(\.$status ~~ [.receiving, .waiting, .reading]).all()
        if unfinished.contains(where: { $0.status != .receiving }) { throw AppError.conflict(.importUnderWay) }
        try await giveUp(unfinished, problem: "replaced by a new upload")
        let record = HealthImportRecord(id: UUID(), patientID: patientID, format: format, size: size, now: now)
        _ = try files.create(try record.requireID())
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

    /// Writes a part to the file as it arrives; whatever arrived before the connection broke counts as received.
    private func receive(_ body: HTTPBody, into record: HealthImportRecord) async throws -> HealthImportRecord {
        let id = try record.requireID()
        let quota = dailyQuota - (try await usedToday(by: record.$patient.id, besides: id).bytes)
        let limit = min(record.size ?? Self.sizeLimit, quota)
        let handle = try FileHandle(forWritingTo: files.file(id))
        try handle.seek(toOffset: UInt64(record.received))
        var received = record.received
        var failure: (any Error)?
        do {
            for try await chunk in body {
                guard received + chunk.count <= limit else { throw AppError.field("body", .tooLong, limit: limit) }
                try handle.write(contentsOf: chunk)
                received += chunk.count
            }
        } catch {
            failure = error
        }
        try handle.truncate(atOffset: UInt64(received))
        try handle.close()
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
        let idle = try await HealthImportRecord.query(on: database).filter(\.$status == .receiving).filter(\.$updatedAt < idleSince).all()
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
        files.remove(try imports.map { try $0.requireID() })
    }

    /// Reads the imports that wait, and any a stopped server left half read: the oldest of each person, up to
    /// `readingTogether` people side by side and a batch of each in turn, so one person's large file holds nobody
    /// else's back. Answers how many were read.
    func runPending() async throws -> Int {
        var read = 0
        while true {
            let pending = try await HealthImportRecord.query(on: database).filter(\.$status ~~ [.waiting, .reading])
                .sort(\.$createdAt).all()
            var people: Set<UUID> = []
            let turn = pending.filter { people.insert($0.$patient.id).inserted }.prefix(Self.readingTogether)
            guard !turn.isEmpty else { return read }
            var readings: [Reading] = []
            for record in turn { readings.append(try await start(record)) }
            while !readings.isEmpty {
                var next: [Reading] = []
                for reading in readings {
                    if try await !step(reading) { next.append(reading) }
                }
                readings = next
            }
            read += turn.count
        }
    }

    /// Reads one import into the person's samples, alone; the file goes once read, whatever came of it.
    func read(_ record: HealthImportRecord) async throws {
        let reading = try await start(record)
        while try await !step(reading) {}
    }

    /// An import being read: its file handed over a batch at a time.
    final class Reading {
        let record: HealthImportRecord
        let handOff: BatchHandOff
        var items: AsyncStream<BatchHandOff.Item>.Iterator
        var problem: String?

        init(record: HealthImportRecord, handOff: BatchHandOff) {
            self.record = record
            self.handOff = handOff
            items = handOff.items.makeAsyncIterator()
        }
    }

    private func start(_ record: HealthImportRecord) async throws -> Reading {
        record.status = .reading
        try await record.save(on: database)
        let source = HealthImportSource(format: record.format, file: files.file(try record.requireID()), size: record.received)
        let reading = Reading(record: record, handOff: BatchHandOff())
        source.start(into: reading.handOff)
        return reading
    }

    /// Stores the import's next batch; true once the file is read, whatever came of it, and the file is gone.
    private func step(_ reading: Reading) async throws -> Bool {
        let record = reading.record
        switch await reading.items.next() {
        case .batch(let raws, let read, let otherRecords):
            do {
                let result = try await SampleService(database: database, services: services).ingest(raws, for: record.$patient.id)
                record.count(result, otherRecords: otherRecords)
                record.read = read
                record.updatedAt = now
                try await record.save(on: database)
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
            let problem = reading.problem
            record.status = problem == nil ? .done : .failed
            record.problem = problem.map { String($0.prefix(500)) }
            if problem == nil { record.read = record.received }
            record.finishedAt = now
            record.updatedAt = now
            try await record.save(on: database)
            files.remove([try record.requireID()])
            return true
        }
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
