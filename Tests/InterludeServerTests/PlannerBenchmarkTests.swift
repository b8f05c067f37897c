import Foundation
import Testing

@testable import InterludeBenchmarks
@testable import InterludeServer

@Suite("Planner benchmark")
struct PlannerBenchmarkTests {
    @Test(
        "the benchmark plans 14 days for every made-up participant and has the sqlite3 shell insert the same rows again"
    )
    func smallRun() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "planner-benchmark-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("interlude.sqlite").path
        try await withTestApp(settings: { $0.database = .sqliteFile(path) }) { app in
            let result = try await PlannerBenchmark(
                database: app.database, services: app.app.interlude, databasePath: path
            )
            .run(participants: 12)
            // Three a day up to 14 days from now in each participant's zone: the days in between whole, today and the
            // fourteenth day in part, depending on the hour there.
            #expect(result.prompts >= 12 * 13 * 3 && result.prompts <= 12 * 15 * 3, "\(result.prompts)")
            // The shell put back every row the planner made.
            #expect(try await app.count("prompts") == result.prompts)
            #expect(result.report.contains("ratio (planner / sqlite3)"))
        }
    }

    @Test("the sqlite3 shell writes what a statement answers to a file, and a statement it refuses is an error")
    func shell() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("sqlite-shell-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let database = folder.appendingPathComponent("shell.sqlite").path
        let answer = folder.appendingPathComponent("answer.csv")

        try SQLiteShell.run([database, "CREATE TABLE t (n INTEGER)", "INSERT INTO t VALUES (1), (2)"])
        try SQLiteShell.run(["-csv", database, "SELECT n * 10 FROM t ORDER BY n"], output: answer)
        try SQLiteShell.run(["-csv", database, "SELECT COUNT(*) FROM t"], appendingTo: answer)

        #expect(try String(contentsOf: answer, encoding: .utf8) == "10\n20\n2\n")
        let refused = #expect(throws: CommandFailure.self) { try SQLiteShell.run([database, "SELECT * FROM missing"]) }
        #expect(refused?.message == "sqlite3 exited with status 1")
    }
}
