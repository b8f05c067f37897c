import Fluent
import Foundation
import InterludeCore
import InterludeServer
import SQLKit
import ZIPFoundation

/// A research study of `participants` × `days` days × three prompts a day × ten items, all answered, exported as
/// the API exports it; then the same rows of responses_long.csv dumped by `sqlite3 -csv` from a plain table, for
/// a ceiling measured in the same run. Peak memory is the export's alone (the fill's is reset first).
struct ExportBenchmark {
    let database: any Database
    let services: AppServices
    /// The SQLite file, beside which the ceiling's scratch database is made.
    let databasePath: String

    private var now: Date { services.clock.now }

    static let items = (1...10).map { "item_\($0)" }
    static let promptsPerDay = 3

    struct Result {
        let participants: Int
        let rows: Int
        let exportSeconds: Double
        let dumpSeconds: Double
        let peakMegabytes: Double

        var exportRate: Double { Double(rows) / exportSeconds }
        var dumpRate: Double { Double(rows) / dumpSeconds }
        /// The export's rows per second as a share of sqlite3's; the aim is at least 0.5.
        var ratio: Double { exportRate / dumpRate }

        var report: String {
            [
                "participants: \(participants)",
                "responses_long.csv rows: \(rows)",
                String(format: "export (whole package): %.2f s, %.0f rows/s", exportSeconds, exportRate),
                String(format: "sqlite3 -csv of the same rows: %.2f s, %.0f rows/s", dumpSeconds, dumpRate),
                String(format: "ratio (export / sqlite3): %.2f (aim: at least 0.50)", ratio),
                String(format: "peak memory of the export: %.0f MB (aim: below 150 MB)", peakMegabytes),
            ].joined(separator: "\n")
        }
    }

    func run(participants: Int, days: Int) async throws -> Result {
        let (researcher, studyID) = try await populate(participants, days: days)
        let grant = try await StudyAccess(database: database, services: services).require(
            .exportData, in: studyID, by: researcher)
        let service = ExportService(database: database, services: services)
        let export = try await service.start(try StudyExportScope(grant, database: database), since: nil)
        let exportID = try export.requireID()
        Self.resetPeakMemory()
        let clock = ContinuousClock()
        let exporting = try await clock.measure { _ = try await service.write(exportID) { _ in } }
        let peak = Self.peakMegabytes()

        let scratch = URL(fileURLWithPath: databasePath).deletingLastPathComponent().appendingPathComponent(
            "export-benchmark")
        try? FileManager.default.removeItem(at: scratch)
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        let long = scratch.appendingPathComponent("responses_long.csv")
        let zip = try await services.files(on: database).local(.export(exportID))
        defer { zip.release() }
        let archive = try Archive(url: zip.url, accessMode: .read)
        guard let entry = archive["responses_long.csv"] else {
            throw CommandFailure(message: "The export has no responses_long.csv.")
        }
        _ = try archive.extract(entry, to: long)
        let table = scratch.appendingPathComponent("ceiling.sqlite").path
        try SQLiteShell.run([table, ".import --csv \(long.path) long"])
        let dumped = scratch.appendingPathComponent("dump.csv")
        let dumping = try clock.measure {
            try SQLiteShell.run(["-csv", "-header", table, "SELECT * FROM long"], output: dumped)
        }
        let rows = try Self.lines(in: dumped) - 1
        try? FileManager.default.removeItem(at: scratch)
        return Result(
            participants: participants, rows: rows, exportSeconds: exporting.seconds, dumpSeconds: dumping.seconds,
            peakMegabytes: peak)
    }

    /// A researcher's study with a ten-item instrument, and everyone in it having answered every prompt.
    private func populate(_ count: Int, days: Int) async throws -> (UserRecord, UUID) {
        let (researcher, study) = try await BenchmarkPopulation.researchStudy(
            "Export benchmark", on: database, now: now)
        let studyID = try study.requireID()
        let definition = InstrumentDefinition(
            key: "benchmark-esm", version: 1, title: "Benchmark ESM",
            sections: [
                Section(
                    id: "now",
                    items: Self.items.map { Item(id: $0, type: .slider, text: "How much?", min: 0, max: 100) })
            ],
            scores: [ScoreRule(id: "mean", title: "Mean", method: .mean, items: Self.items)])
        let catalog = InstrumentCatalog(database: database, services: services)
        _ = try await catalog.publish(
            try await catalog.importDraft(definition, format: .json, owner: nil, shared: true, by: researcher))

        let start = now.addingTimeInterval(-Double(days + 1) * 86_400)
        var generator = SystemRandomNumberGenerator()
        let stored = ResponseService(database: database, services: services)
        for first in stride(from: 0, to: count, by: 50) {
            let users = (first..<min(first + 50, count)).map { index in
                let user = UserRecord(
                    id: UUID(), email: "benchmark-\(index)@example.org", passwordHash: "-", role: .patient, name: nil,
                    locale: "en",
                    timeZone: "Europe/Vienna", mustChangePassword: false, now: start)
                user.emailVerifiedAt = start
                return user
            }
            try await users.create(on: database)
            try await users.map {
                PatientProfileRecord(
                    userID: $0.id!, pseudonym: "B-\($0.email.dropFirst(10).prefix { $0 != "@" })",
                    shareWithResearch: true)
            }
            .create(on: database)
            try await users.map {
                EnrollmentRecord(
                    studyID: studyID, patientID: $0.id!, therapistID: nil, status: .active, consentVersion: "1",
                    now: start)
            }.create(on: database)
            var prompts: [[any SQLExpression]] = []
            var responses: [[any SQLExpression]] = []
            for user in users {
                for day in 0..<days {
                    for beep in 0..<Self.promptsPerDay {
                        let opens = start.addingTimeInterval(Double(day) * 86_400 + Double(9 + beep * 4) * 3600)
                        let answered = opens.addingTimeInterval(600)
                        let promptID = UUID()
                        let responseID = UUID()
                        let answers = Dictionary(
                            uniqueKeysWithValues: Self.items.map {
                                ($0, AnswerValue.number(Double(Int.random(in: 0...100, using: &generator))))
                            })
                        let scores = definition.scores(for: answers)
                        prompts.append([
                            SQLBind(promptID), SQLBind(start), SQLBind(user.id!), SQLBind(studyID),
                            SQLBind(definition.key), SQLBind(1),
                            SQLBind(opens), SQLBind(opens.addingTimeInterval(3600)),
                            SQLBind(PromptStatus.completed.rawValue),
                            SQLBind(PromptSource.schedule.rawValue), SQLBind(answered), SQLBind(responseID),
                            SQLBind(answered),
                        ])
                        responses.append([
                            SQLBind(responseID), SQLBind(user.id!), SQLBind(promptID), SQLBind(studyID),
                            SQLBind(definition.key), SQLBind(1),
                            SQLBind(try stored.seal(answers)),
                            SQLBind(
                                try services.cipher.seal(
                                    try ResponseService.encode(scores, fast: services.settings.apiFastPaths))),
                            SQLBind(answered.addingTimeInterval(-60)),
                            SQLBind(answered), SQLBind(answered),
                        ])
                    }
                }
            }
            for batch in stride(from: 0, to: prompts.count, by: 500) {
                let rows = batch..<min(batch + 500, prompts.count)
                try await Statements.insertRows(
                    Array(prompts[rows]), into: PromptRecord.schema,
                    columns: [
                        "id", "created_at", "patient_id", "study_id", "instrument_key", "instrument_version",
                        "opens_at",
                        "closes_at", "status", "source", "completed_at", "response_id", "changed_at",
                    ], on: database)
                try await Statements.insertRows(
                    Array(responses[rows]), into: ResponseRecord.schema,
                    columns: [
                        "id", "patient_id", "prompt_id", "study_id", "instrument_key", "instrument_version", "answers",
                        "scores",
                        "started_at", "completed_at", "received_at",
                    ], on: database)
            }
        }
        return (researcher, studyID)
    }

    private static func lines(in url: URL) throws -> Int {
        let handle = try FileHandle(forReadingFrom: url)
        defer { try? handle.close() }
        var count = 0
        while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty {
            count += chunk.reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) }
        }
        return count
    }

    /// Linux keeps the peak resident size per process; writing 5 to clear_refs starts it afresh.
    static func resetPeakMemory() {
        try? Data("5".utf8).write(to: URL(fileURLWithPath: "/proc/self/clear_refs"))
    }

    static func peakMegabytes() -> Double {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
            let kilobytes = Double(line.split(separator: " ").dropFirst().first ?? "")
        else { return 0 }
        return kilobytes / 1024
    }
}
