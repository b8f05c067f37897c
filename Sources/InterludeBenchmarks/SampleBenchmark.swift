import Fluent
import Foundation
import InterludeCore
import InterludeServer
import SQLKit
import Vapor

/// Samples through the HTTP API from eight clients at once, in batches of 5000, against a ceiling measured in the
/// same run: the same number of rows inserted into the same table with plain multi-row INSERTs. Then an Apple Health
/// export of the given size, written to disk and imported as an upload would be, with the import's peak memory.
struct SampleBenchmark {
    let app: Application

    private var database: any Database { app.db }
    private var services: AppServices { app.interlude }
    private var now: Date { services.clock.now }

    static let clients = 8
    static let batch = Sample.batchLimit

    struct Result {
        let samples: Int
        let apiSeconds: Double
        let insertSeconds: Double
        let exportMegabytes: Double
        let importedRecords: Int
        let importSeconds: Double
        let peakMegabytes: Double
        /// What the process held when the import began (the server, the database's pages, the API run's allocations).
        let baseMegabytes: Double

        var apiRate: Double { Double(samples) / apiSeconds }
        var insertRate: Double { Double(samples) / insertSeconds }
        /// The API's samples per second as a share of the plain inserts'; the aim is at least 0.4.
        var ratio: Double { apiRate / insertRate }

        var report: String {
            [
                "samples: \(samples) from \(SampleBenchmark.clients) clients in batches of \(SampleBenchmark.batch)",
                String(format: "through POST /api/v1/me/samples: %.1f s, %.0f samples/s", apiSeconds, apiRate),
                String(
                    format: "plain multi-row INSERT of the same rows: %.1f s, %.0f samples/s", insertSeconds, insertRate
                ),
                String(format: "ratio (API / INSERT): %.2f (aim: at least 0.40)", ratio),
                String(
                    format: "Apple Health export of %.0f MB (%d records) imported in %.1f s", exportMegabytes,
                    importedRecords, importSeconds),
                String(
                    format:
                        "peak memory of the import: %.0f MB (aim: below 200 MB); the process held %.0f MB when it began",
                    peakMegabytes, baseMegabytes),
            ].joined(separator: "\n")
        }
    }

    func run(samples total: Int, exportMegabytes: Int) async throws -> Result {
        let people = try await BenchmarkPopulation.make(Self.clients * 2, on: database, now: now)
        let practice = try requireRecord(try await StudyRecord.find(people.practiceID, on: database))
        practice.recordSettings = RecordSettings(
            samples: SampleSettings(requests: [
                .init(type: .heartRate, purpose: "Benchmark"), .init(type: .stepCount, purpose: "Benchmark"),
            ]))
        try await practice.save(on: database)
        let senders = Array(people.patients.prefix(Self.clients))
        let samples = SampleService(database: database, services: services)
        var tokens: [String] = []
        for patient in senders {
            _ = try await samples.setEnabled(.heartRate, true, for: try patient.requireID())
            _ = try await samples.setEnabled(.stepCount, true, for: try patient.requireID())
            let token = SecretToken.generate()
            try await SessionRecord(
                userID: try patient.requireID(), kind: .api, tokenHash: token.hash, csrfToken: nil,
                expiresAt: now.addingTimeInterval(3600), now: now
            ).create(on: database)
            tokens.append(token.value)
        }
        let perClient = total / Self.clients
        let start = now.addingTimeInterval(-Double(perClient) * 2)

        try await app.server.start(address: .hostname("127.0.0.1", port: 0))
        guard let port = app.http.server.shared.localAddress?.port else {
            throw CommandFailure(message: "The server did not start.")
        }
        let client = app.client
        let clock = ContinuousClock()
        let sending = try await clock.measure {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (index, token) in tokens.enumerated() {
                    group.addTask {
                        for first in stride(from: 0, to: perClient, by: Self.batch) {
                            let body = Self.body(
                                client: index, from: first, count: min(Self.batch, perClient - first), start: start)
                            var headers: HTTPHeaders = ["Content-Type": "application/json"]
                            headers.bearerAuthorization = BearerAuthorization(token: token)
                            let response = try await client.send(
                                ClientRequest(
                                    method: .POST, url: URI(string: "http://127.0.0.1:\(port)/api/v1/me/samples"),
                                    headers: headers,
                                    body: ByteBuffer(data: body)))
                            guard response.status == .ok else {
                                throw CommandFailure(message: "The API answered \(response.status.code) to a batch.")
                            }
                        }
                    }
                }
                try await group.waitForAll()
            }
        }
        await app.server.shutdown()
        let stored = try await SampleRecord.query(on: database).count()
        guard stored == perClient * Self.clients else {
            throw CommandFailure(message: "Only \(stored) samples were stored.")
        }

        let inserting = try await clock.measure {
            for (index, patient) in people.patients.dropFirst(Self.clients).enumerated() {
                let patientID = try patient.requireID()
                for first in stride(from: 0, to: perClient, by: Self.batch) {
                    try await Self.insert(
                        patientID: patientID, client: index, from: first, count: min(Self.batch, perClient - first),
                        start: start,
                        created: now, on: database)
                }
            }
        }

        let imported = try await importExport(of: senders[0], megabytes: exportMegabytes)
        return Result(
            samples: perClient * Self.clients, apiSeconds: sending.seconds, insertSeconds: inserting.seconds,
            exportMegabytes: imported.megabytes, importedRecords: imported.records, importSeconds: imported.seconds,
            peakMegabytes: imported.peak, baseMegabytes: imported.base)
    }

    /// One batch as a phone sends it: heart rates and step counts, each under its own source id.
    static func body(client: Int, from first: Int, count: Int, start: Date) -> Data {
        var text = #"{"samples":["#
        text.reserveCapacity(count * 260)
        for index in first..<(first + count) {
            let at = ISO8601DateFormatter.string(
                from: start.addingTimeInterval(Double(index) * 2), timeZone: .gmt,
                formatOptions: [.withInternetDateTime])
            let steps = index % 2 == 0
            if index > first { text += "," }
            text +=
                #"{"type":"\#(steps ? "stepCount" : "heartRate")","value":\#(steps ? 12 : 60 + index % 50),"unit":"\#(steps ? "count" : "count/min")","startsAt":"\#(at)","endsAt":"\#(at)","sourceId":"bench-\#(client)-\#(index)","source":{"app":"Health","deviceModel":"Watch6,1","osVersion":"10.1"}}"#
        }
        return Data((text + "]}").utf8)
    }

    /// The ceiling: the same rows straight into the table, a statement per thousand, a transaction per batch.
    static func insert(
        patientID: UUID, client: Int, from first: Int, count: Int, start: Date, created: Date, on database: any Database
    ) async throws {
        try await database.atomically { database in
            for chunk in stride(from: first, to: first + count, by: SampleService.insertRows) {
                let rows = (chunk..<min(chunk + SampleService.insertRows, first + count)).map {
                    index -> [any SQLExpression] in
                    let at = start.addingTimeInterval(Double(index) * 2)
                    let steps = index % 2 == 0
                    return [
                        SQLBind(UUID()), SQLBind(created), SQLBind(patientID),
                        SQLBind(steps ? "stepCount" : "heartRate"),
                        SQLBind(steps ? 12.0 : Double(60 + index % 50)), SQLBind(at), SQLBind(at),
                        SQLBind("ceiling-\(client)-\(index)"),
                        SQLBind("Health"), SQLBind(Optional<String>.none), SQLBind("Watch6,1"), SQLBind("10.1"),
                        SQLBind(Optional<Int>.none),
                    ]
                }
                try await Statements.insertRows(
                    rows, into: SampleRecord.schema, columns: SampleRecord.columns,
                    skippingConflictsOf: ["patient_id", "source_id"],
                    on: database)
            }
        }
    }

    /// Writes an export of about `megabytes` (a third heart rates, the rest energy records Interlude does not
    /// collect), imports it as an upload would be, and measures the import's peak memory alone.
    private func importExport(of patient: UserRecord, megabytes: Int) async throws
        -> (records: Int, megabytes: Double, seconds: Double, peak: Double, base: Double)
    {
        let record = HealthImportRecord(
            id: UUID(), patientID: try patient.requireID(), format: .appleHealthXML, size: nil, now: now)
        try FileManager.default.createDirectory(at: services.scratchDirectory, withIntermediateDirectories: true)
        let url = services.scratchDirectory.appendingPathComponent(
            "benchmark-\(try record.requireID().lowercasedText).xml")
        guard FileManager.default.createFile(atPath: url.path, contents: nil) else {
            throw CocoaError(.fileWriteUnknown)
        }
        let handle = try FileHandle(forWritingTo: url)
        try handle.write(
            contentsOf: Data(#"<?xml version="1.0" encoding="UTF-8"?>\#n<HealthData locale="en_GB">\#n"#.utf8))
        var written = 0
        var records = 0
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = .gmt
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss Z"
        let origin = now.addingTimeInterval(-365 * 86_400)
        while written < megabytes * 1_000_000 {
            var chunk = ""
            for _ in 0..<1000 {
                let at = formatter.string(from: origin.addingTimeInterval(Double(records) * 10))
                let heart = records % 3 == 0
                chunk +=
                    #" <Record type="HKQuantityTypeIdentifier\#(heart ? "HeartRate" : "BasalEnergyBurned")" sourceName="Apple Watch" sourceVersion="10.1" device="&lt;&lt;HKDevice: 0x1&gt;, name:Apple Watch, manufacturer:Apple Inc., model:Watch, hardware:Watch6,1, software:10.1&gt;" unit="\#(heart ? "count/min" : "kcal")" creationDate="\#(at)" startDate="\#(at)" endDate="\#(at)" value="\#(heart ? 60 + records % 40 : 1)"/>"#
                    + "\n"
                records += 1
            }
            let data = Data(chunk.utf8)
            try handle.write(contentsOf: data)
            written += data.count
        }
        try handle.write(contentsOf: Data("</HealthData>\n".utf8))
        try handle.close()
        try await services.files(on: database).put(.healthImport(try record.requireID()), from: url)
        record.received = written
        record.size = written
        record.status = .waiting
        try await record.create(on: database)
        ExportBenchmark.resetPeakMemory()
        let base = ExportBenchmark.peakMegabytes()
        let clock = ContinuousClock()
        var finished: HealthImportRecord?
        let reading = try await clock.measure {
            finished = try await HealthImportService(database: database, services: services).read(record)
        }
        let peak = ExportBenchmark.peakMegabytes()
        guard finished?.status == .done else {
            throw CommandFailure(message: "The import failed: \(finished?.problem ?? "")")
        }
        return (records, Double(written) / 1_000_000, reading.seconds, peak, base)
    }
}

/// The record, or a failure naming what is missing.
private func requireRecord<T>(_ value: T?) throws -> T {
    guard let value else { throw CommandFailure(message: "The benchmark's practice is missing.") }
    return value
}
