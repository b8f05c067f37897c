import FluentKit
import Foundation
import SQLKit
import Testing

@testable import InterludeSQLite

/// The engine keeps a model query's text per shape and only gathers the values each time. What it reads through a
/// kept text must be what Fluent's own SQLite driver reads for the same query; the server's whole suite runs with
/// every kept text checked against the one written afresh (`checkingKeptStatements`).
@Suite("Kept statements")
struct KeptStatementTests {
    /// Every kind of model query the server issues, each run twice with other values so the second takes the kept
    /// text: filters of each kind, a group, a join, sorts, a limit and an offset, aggregates, an update and a delete.
    static func reads(on database: any Database, folder: UUID, other: UUID, at date: Date) -> [(
        String, () async throws -> String
    )] {
        func notes(_ query: QueryBuilder<Note>) -> () async throws -> String {
            {
                try await query.sort(\.$text).all().map { "\($0.text)|\($0.score.map(String.init) ?? "-")" }.joined(
                    separator: ",")
            }
        }
        let query = { Note.query(on: database) }
        return [
            ("equal", notes(query().filter(\.$folder.$id == folder))),
            ("not equal", notes(query().filter(\.$folder.$id != folder))),
            ("null", notes(query().filter(\.$score == nil))),
            ("not null", notes(query().filter(\.$score != nil))),
            ("in", notes(query().filter(\.$folder.$id ~~ [folder, other]))),
            ("in nothing", notes(query().filter(\.$folder.$id ~~ []))),
            ("not in", notes(query().filter(\.$text !~ ["a", "b"]))),
            ("order", notes(query().filter(\.$writtenAt >= date).filter(\.$score < 5))),
            ("or", notes(query().group(.or) { $0.filter(\.$score > 3).filter(\.$text == "c") })),
            (
                "join",
                notes(
                    query().join(Folder.self, on: \Note.$folder.$id == \Folder.$id).filter(
                        Folder.self, \.$name == "home"))
            ),
            ("sort, limit, offset", notes(query().sort(\.$writtenAt, .descending).limit(2).offset(1))),
            ("first", { try await query().filter(\.$score > 1).sort(\.$score).first()?.text ?? "-" }),
            ("count", { "\(try await query().filter(\.$folder.$id == folder).count())" }),
            ("sum", { "\(try await query().sum(\.$score) ?? -1)" }),
            (
                "maximum",
                { "\(try await query().filter(\.$writtenAt < date).max(\.$writtenAt)?.timeIntervalSince1970 ?? -1)" }
            ),
        ]
    }

    @Test("rows read through kept texts are the rows Fluent's own SQLite driver reads, for every kind of model query")
    func sameRowsAsStock() async throws {
        try await Engine.with { engine in
            // setup
            try await engine.createTables()
            let (home, work) = (Folder(name: "home"), Folder(name: "work"))
            try await home.create(on: engine.database)
            try await work.create(on: engine.database)
            let start = Date(timeIntervalSince1970: 1_772_438_400)
            for (index, text) in ["a", "b", "c", "d", "e", "f"].enumerated() {
                let note = Note(
                    text: text, score: index % 3 == 0 ? nil : index,
                    writtenAt: start.addingTimeInterval(Double(index) * 3600),
                    folder: index % 2 == 0 ? home.id : work.id)
                try await note.create(on: engine.database)
            }

            // act: each query on the engine (twice, with other values: the second reads through the kept text) and
            // through the stock driver
            var engineRows: [String] = []
            var stockRows: [String] = []
            for (folder, other, at) in [
                (home.id!, work.id!, start), (work.id!, UUID(), start.addingTimeInterval(7200)),
            ] {
                for (_, read) in Self.reads(on: engine.database, folder: folder, other: other, at: at) {
                    engineRows.append(try await read())
                }
                for (_, read) in Self.reads(on: engine.stockDatabase, folder: folder, other: other, at: at) {
                    stockRows.append(try await read())
                }
            }

            // verify
            let names = Self.reads(on: engine.database, folder: UUID(), other: UUID(), at: start).map(\.0)
            for (index, (ours, theirs)) in zip(engineRows, stockRows).enumerated() {
                #expect(ours == theirs, "\(names[index % names.count])")
            }
            #expect(engineRows.count == 30 && Set(engineRows).count > 10)
        }
    }

    @Test("an update and a delete through kept texts change exactly the rows their values name")
    func sameChangesAsStock() async throws {
        try await Engine.with { engine in
            // setup
            try await engine.createTables()
            let notes = (0..<4).map { (index: Int) in
                Note(text: "n" + String(index), score: index, writtenAt: Date(timeIntervalSince1970: 0), folder: nil)
            }
            for note in notes { try await note.create(on: engine.database) }

            // act: the same update and delete twice each, for other rows
            for note in notes.prefix(2) {
                try await Note.query(on: engine.database).filter(\.$id == note.id!).set(\.$score, to: 10).update()
            }
            for note in notes.suffix(1) {
                try await Note.query(on: engine.database).filter(\.$id == note.id!).delete()
            }
            try await Note.query(on: engine.database).filter(\.$score == 2).delete()

            // verify: read back through the stock driver
            let left = try await Note.query(on: engine.stockDatabase).sort(\.$text).all().map {
                "\($0.text)=\($0.score ?? -1)"
            }
            #expect(left == ["n0=10", "n1=10"])
        }
    }

    @Test("a kept text that differs from the one written afresh fails its query when checked, and is run when not")
    func checkedTexts() async throws {
        for checking in [true, false] {
            try await Engine.with(checking: checking) { engine in
                // setup: the kept text for a shape of query only this test asks turns its filter round
                try await engine.createTables()
                try await Folder(name: "home").create(on: engine.database)
                let query = {
                    Folder.query(on: engine.database).filter(\.$name == "nobody").limit(7).field(\.$id).field(\.$name)
                }
                var shape = ModelStatement.Shape()
                let shaped = shape.add(query().query)
                #expect(shaped)
                ModelStatement.keep(
                    #"SELECT "folders"."id" AS "folders_id", "folders"."name" AS "folders_name" FROM "folders" WHERE "folders"."name" <> ?1 LIMIT 7"#,
                    for: shape.key)

                // act
                let outcome = await Result(catching: { try await query().all() })

                // verify
                switch (checking, outcome) {
                case (true, .failure(let error)): #expect(error is KeptStatementMismatch)
                case (false, .success(let folders)): #expect(folders.map(\.name) == ["home"])
                default: Issue.record("checking \(checking): \(outcome)")
                }
            }
        }
    }
}

extension Result where Failure == any Error {
    init(catching body: () async throws -> Success) async {
        do {
            self = .success(try await body())
        } catch {
            self = .failure(error)
        }
    }
}
