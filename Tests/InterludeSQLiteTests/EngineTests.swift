import FluentKit
import Foundation
import NIOCore
import NIOPosix
import SQLKit
import SQLiteKit
import Testing

@testable import InterludeSQLite

/// The embedded engine runs SQLite directly: values go in and come out as SQLiteKit encodes and decodes them, the
/// one writer commits concurrent writes together while a failing one rolls back alone, reads beside it see what
/// is committed, and the write-ahead log is copied back into the file beside the writer.
@Suite("Embedded SQLite engine")
struct EngineTests {
    struct Refusal: Error {}

    enum Mood: String, Codable {
        case calm
    }

    @Test(
        "values come out as SQLiteKit decodes them, refusals included",
        arguments: [
            SQLiteData.text("0F8FAD5B-D9CB-469F-A165-70867728950E"), .text("0f8fad5b-d9cb-469f-a165-70867728950e"),
            .text("0f8fad5b-d9cb-469f-a165-70867728950"), .text("0f8fad5bxd9cb-469f-a165-70867728950e"),
            .text("0g8fad5b-d9cb-469f-a165-70867728950e"), .text("calm"), .text(""), .text("3.5"),
            .float(1_772_438_400.123_456_7),
            .float(-0.25), .integer(0), .integer(1), .integer(2), .integer(-7), .null,
        ])
    func decoding(_ value: SQLiteData) {
        let decoder = SQLiteDataDecoder()
        func same<T: Decodable & Equatable>(_ type: T.Type) {
            let ours = try? SQLiteResultRow.decode(value, as: type)
            let theirs = try? decoder.decode(type, from: value)
            #expect(ours == theirs, "\(value) as \(type)")
        }
        same(UUID.self)
        same(String.self)
        same(Date.self)
        same(Int.self)
        same(Double.self)
        same(Bool.self)
        same(Mood.self)
        same(Int64.self)
        same(UUID?.self)
        same(String?.self)
        same(Date?.self)
        same(Int?.self)
        same(Double?.self)
        same(Bool?.self)
        same(Mood?.self)
        same(Int64?.self)
    }

    @Test("values go in as SQLiteKit encodes them")
    func encoding() throws {
        let encoder = SQLiteDataEncoder()
        let values: [any Encodable] = [
            UUID(), "text", "", Date(timeIntervalSince1970: 1_772_438_400.5), 42, -1.5, true, false, Mood.calm,
            UUID?.none as any Encodable, UUID?.some(UUID()) as any Encodable, String?.some("x") as any Encodable,
            Data([1, 2, 3]), Int64(9),
        ]
        for value in values {
            #expect(try SQLiteValues.data(value) == encoder.encode(value), "\(value)")
        }
    }

    @Test("a statement written out is a read or a write by its first word, whatever its case and what comes before it")
    func statementKinds() {
        let statements: [(sql: String, writes: Bool)] = [
            ("SELECT 1", false), ("  select 1", false), ("(SELECT 1) UNION (SELECT 2)", false),
            ("\npragma integrity_check", false), ("Explain query plan SELECT 1", false), ("VACUUM INTO 'copy'", false),
            ("INSERT INTO t VALUES (1)", true), ("update t set a = 1", true), ("\n  DELETE FROM t", true),
            ("WITH x AS (SELECT 1) DELETE FROM t", true), ("CREATE TABLE t (a)", true), ("Sélect", true),
        ]
        for statement in statements {
            #expect(
                EmbeddedDatabase.writes(SQLRaw(statement.sql), sql: statement.sql) == statement.writes,
                "\(statement.sql)")
        }
    }

    @Test("ids are written as UUID writes them and read as the decoder reads them, misshapen text included")
    func uuidText() {
        for _ in 0..<200 {
            let id = UUID()
            #expect(UUIDText.upper(id) == id.uuidString && UUIDText.lower(id) == id.uuidString.lowercased())
            #expect(UUIDText.parse(id.uuidString) == id && UUIDText.parse(id.uuidString.lowercased()) == id)
        }
        let alphabet = Array("0123456789abcdefABCDEF-xg +")
        let decoder = SQLiteDataDecoder()
        for _ in 0..<2_000 {
            var text = UUID().uuidString
            let place = text.index(text.startIndex, offsetBy: Int.random(in: 0..<36))
            text.replaceSubrange(place...place, with: String(alphabet.randomElement()!))
            // The quick reading answers only for well-formed text; the rest is left to the decoder.
            let quick = UUIDText.parse(text)
            #expect(quick == nil || quick == UUID(uuidString: text), "\(text)")
            #expect(
                (try? SQLiteResultRow.decode(.text(text), as: UUID.self))
                    == (try? decoder.decode(UUID.self, from: .text(text))),
                "\(text)")
        }
    }

    @Test("writes sent at once are committed together; a failing one rolls back alone and answers with its own error")
    func groupCommit() async throws {
        try await Engine.with { engine in
            // setup
            try await engine.sql.raw("CREATE TABLE probe (id TEXT PRIMARY KEY, note TEXT)").run()

            // act: forty inserts at once, five of them the same id, and one transaction that fails after writing
            let outcomes = await withTaskGroup(of: String.self) { group in
                for index in 0..<40 {
                    group.addTask {
                        let id = index < 5 ? "same" : "row-\(index)"
                        do {
                            try await engine.sql.raw("INSERT INTO probe (id) VALUES (\(bind: id))").run()
                            return "stored"
                        } catch let error as any DatabaseError where error.isConstraintFailure {
                            return "refused"
                        } catch {
                            return "failed: \(error)"
                        }
                    }
                }
                group.addTask {
                    do {
                        try await engine.database.transaction { database in
                            try await (database as! any SQLDatabase).raw("INSERT INTO probe (id) VALUES ('lost')").run()
                            throw Refusal()
                        }
                        return "stored"
                    } catch is Refusal {
                        return "thrown"
                    } catch {
                        return "failed: \(error)"
                    }
                }
                var outcomes: [String] = []
                for await outcome in group { outcomes.append(outcome) }
                return outcomes
            }

            // verify
            let ids = try await engine.sql.raw("SELECT id FROM probe").all().map {
                try $0.decode(column: "id", as: String.self)
            }
            #expect(outcomes.filter { $0 == "stored" }.count == 36)
            #expect(outcomes.filter { $0 == "refused" }.count == 4)
            #expect(outcomes.contains("thrown") && !outcomes.contains { $0.hasPrefix("failed") })
            #expect(ids.count == 36 && Set(ids).count == 36 && ids.contains("same") && !ids.contains("lost"))
        }
    }

    @Test("a read beside the writer sees what is committed, never a transaction under way")
    func readsSeeCommitted() async throws {
        try await Engine.with { engine in
            // setup
            try await engine.sql.raw("CREATE TABLE probe (id TEXT PRIMARY KEY)").run()

            // act
            let seenInside = try await engine.database.transaction { database in
                try await (database as! any SQLDatabase).raw("INSERT INTO probe (id) VALUES ('a')").run()
                let inside = try await (database as! any SQLDatabase).raw("SELECT COUNT(*) AS n FROM probe").first()
                let beside = try await engine.sql.raw("SELECT COUNT(*) AS n FROM probe").first()
                return try [inside, beside].map { try $0?.decode(column: "n", as: Int.self) }
            }
            let after = try await engine.sql.raw("SELECT COUNT(*) AS n FROM probe").first()?.decode(
                column: "n", as: Int.self)

            // verify
            #expect(seenInside == [1, 0] && after == 1)
        }
    }

    @Test("a statement kept prepared sees a column added after it was first run")
    func schemaChange() async throws {
        try await Engine.with { engine in
            // setup
            try await engine.sql.raw("CREATE TABLE probe (id TEXT PRIMARY KEY)").run()
            try await engine.sql.raw("INSERT INTO probe (id) VALUES ('a')").run()
            let before = try await engine.sql.raw("SELECT * FROM probe").first()?.allColumns

            // act
            try await engine.sql.raw("ALTER TABLE probe ADD COLUMN extra TEXT DEFAULT 'x'").run()
            let row = try await engine.sql.raw("SELECT * FROM probe").first()

            // verify
            #expect(before == ["id"] && row?.allColumns == ["id", "extra"])
            #expect(try row?.decode(column: "extra", as: String.self) == "x")
        }
    }

    @Test("a statement kept prepared is run with exactly the values given, never with those of an earlier run")
    func valuesPerRun() async throws {
        try await Engine.with { engine in
            // act: the same text each time, once with its second value missing
            func pair(_ row: (any SQLRow)?) throws -> [Int] {
                try ["a", "b"].map { try row?.decode(column: $0, as: Int.self) ?? -1 }
            }
            let first = try pair(try await engine.sql.raw("SELECT \(bind: 1) AS a, \(bind: 2) AS b").first())
            await #expect(throws: (any Error).self) {
                try await engine.sql.raw("SELECT \(bind: 3) AS a, ?2 AS b").run()
            }
            let second = try pair(try await engine.sql.raw("SELECT \(bind: 4) AS a, \(bind: 5) AS b").first())

            // verify
            #expect(first == [1, 2] && second == [4, 5])
        }
    }

    @Test("a statement SQLite refuses answers with its error, and the next one runs")
    func refusedStatement() async throws {
        try await Engine.with { engine in
            // act
            await #expect(throws: (any Error).self) { try await engine.sql.raw("SELEC 1").run() }
            await #expect(throws: (any Error).self) { try await engine.sql.raw("INSERT INTO nowhere VALUES (1)").run() }
            let one = try await engine.sql.raw("SELECT 1 AS n").first()?.decode(column: "n", as: Int.self)

            // verify
            #expect(one == 1)
        }
    }

    /// The size of the database file itself, without its log.
    static func fileSize(_ path: String) throws -> Int {
        try #require(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
    }

    @Test("the log is copied into the database file beside the writer, long before the writer's own limit")
    func logCopiedBeside() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("checkpoint-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        // setup: side by side, a store that copies every 50 pages and one that never copies beside its writer; the
        // writer's own limit is beyond reach in both
        func store(copyingEvery step: Int) -> EmbeddedStore {
            EmbeddedStore(
                path: folder.appendingPathComponent("\(step).sqlite").path, idleReaders: 1, threadPool: .singleton,
                logLimit: 1_000_000, copyStep: step)
        }
        let often = store(copyingEvery: 50)
        let never = store(copyingEvery: 1_000_000)
        defer {
            often.shutdown()
            never.shutdown()
        }
        // act: 200 rows of 2 KB in each, a commit each
        for store in [often, never] {
            try await store.writer().perform {
                try $0.execute("CREATE TABLE probe (id INTEGER PRIMARY KEY, note TEXT)")
            }
            for _ in 0..<200 {
                try await store.writer().perform {
                    try $0.execute("INSERT INTO probe (note) VALUES (hex(randomblob(1024)))")
                }
            }
        }
        let committed = try Self.fileSize(never.path)
        let deadline = ContinuousClock.now + .seconds(30)
        while try Self.fileSize(often.path) - committed < 300_000, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        // verify: the often-copied file took the rows in (about 400 KB); meanwhile the other kept them in its log
        #expect(try Self.fileSize(often.path) - committed > 300_000)
        #expect(try Self.fileSize(never.path) == committed)
        for store in [often, never] {
            #expect(try Self.count("SELECT COUNT(*) AS n FROM probe", in: store) == 200)
        }
    }

    @Test("a log the writer keeps adding to starts afresh once past its limit, and every commit stays in")
    func logStartsAfresh() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("restart-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        // setup: a log limit of 200 pages (800 KB), copied beside the writer every 50
        let store = EmbeddedStore(
            path: folder.appendingPathComponent("restart.sqlite").path, idleReaders: 2, threadPool: .singleton,
            logLimit: 200, copyStep: 50)
        defer { store.shutdown() }
        try await store.writer().perform { try $0.execute("CREATE TABLE probe (id INTEGER PRIMARY KEY, note TEXT)") }
        // act: 1 000 commits of a 4 KB row each (about 2 000 pages written to the log, 8 MB), from 8 writers at once,
        // each reading the table between its writes
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    for _ in 0..<125 {
                        try await store.writer().perform {
                            try $0.execute("INSERT INTO probe (note) VALUES (hex(randomblob(2048)))")
                        }
                        _ = try Self.count("SELECT COUNT(*) AS n FROM probe", in: store)
                    }
                }
            }
            try await group.waitForAll()
        }
        // verify: the log never grew far past its limit, since it started afresh; nothing was lost on the way
        let log = try Self.fileSize(store.path + "-wal")
        #expect(log < 2_000_000, "a log of \(log) bytes")
        #expect(try Self.count("SELECT COUNT(*) AS n FROM probe", in: store) == 1000)
        let integrity = try store.read { handle in
            var answer = ""
            try handle.query("PRAGMA integrity_check", []) {
                answer = try $0.decode(column: "integrity_check", as: String.self)
            }
            return answer
        }
        #expect(integrity == "ok")
    }

    static func count(_ sql: String, in store: EmbeddedStore) throws -> Int {
        try store.read { handle in
            var count = 0
            try handle.query(sql, []) { count = try $0.decode(column: "n", as: Int.self) }
            return count
        }
    }
}
