import Foundation
import Testing

/// Statements written out live in `Persistence/` (the migrations and `Persistence/Statements/`), each a function named
/// for what it does; features ask for them by name and otherwise use Fluent's models and queries.
@Suite("Sources: SQL in one place")
struct SourceSQLTests {
    /// What only code in `Persistence/` may write: the SQL side of a database, SQL text, text pasted unquoted into it.
    static let forbidden = ["SQLDatabase", "SQLQueryString", "unsafeRaw:", "Statements.sql("]

    /// The lines of a server source file outside `Persistence/` that write SQL of their own.
    static func sqlOutsidePersistence(path: String, text: String) -> [Int] {
        guard path.hasPrefix("InterludeServer/"), !path.hasPrefix("InterludeServer/Persistence/") else { return [] }
        return text.split(separator: "\n", omittingEmptySubsequences: false).enumerated().compactMap { number, line in
            let code = line.split(separator: "//", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            return forbidden.contains { code.contains($0) } ? number + 1 : nil
        }
    }

    @Test("no statement written out in a feature: SQL lives in Persistence/")
    func oneRoom() throws {
        let files = try SourceSafetyTests.swiftFiles()
        #expect(files.contains { $0.path.hasPrefix("InterludeServer/Persistence/Statements/") })
        for (path, text) in files {
            for line in Self.sqlOutsidePersistence(path: path, text: text) {
                Issue.record("\(path):\(line) writes SQL outside Persistence/")
            }
        }
    }

    @Test("a feature casting to SQLDatabase or writing SQL text is found; the same in Persistence/ and comments is not")
    func theCheckFinds() {
        let feature = """
            let rows = try await (database as! any SQLDatabase).raw("SELECT 1").all()
            // a comment may name SQLDatabase
            let query: SQLQueryString = "SELECT \\(unsafeRaw: name)"
            """
        #expect(Self.sqlOutsidePersistence(path: "InterludeServer/Sync/SyncService.swift", text: feature) == [1, 3])
        #expect(
            Self.sqlOutsidePersistence(path: "InterludeServer/Persistence/Statements/Sync.swift", text: feature).isEmpty
        )
        #expect(
            Self.sqlOutsidePersistence(path: "InterludeServer/Sync/Plain.swift", text: "try await Statements.ping(db)")
                .isEmpty)
    }
}
