import FluentKit
import Foundation
import InterludeCore
import NIOCore
import NIOPosix
import SQLKit
import SQLiteKit
import Testing

@testable import InterludeSQLite
@testable import InterludeServer

/// The server's own model queries on the embedded engine: written as SQLite's driver writes them, kept per shape,
/// and read back into the server's records (the engine itself is tested in InterludeSQLiteTests).
@Suite("Embedded database")
struct EmbeddedDatabaseTests {
    /// One query of each kind, the read with a join and a sort.
    static func queries(on database: any Database) -> [(String, DatabaseQuery)] {
        let id = UUID()
        var create = SettingRecord.query(on: database).field(\.$id).field(\.$value).field(\.$updatedAt)
            .set(\.$id, to: "k").set(\.$value, to: "v").set(\.$updatedAt, to: Date()).query
        create.action = .create
        var count = PromptRecord.query(on: database).filter(\.$patient.$id == id).query
        count.action = .aggregate(.field(.path([.id], schema: PromptRecord.schema), .count))
        var update = PromptRecord.query(on: database).filter(\.$id == id).field(\.$status).set(
            \.$status, to: .completed
        ).query
        update.action = .update
        var delete = PromptRecord.query(on: database).filter(\.$id ~~ [id, UUID()]).query
        delete.action = .delete
        let read = SessionRecord.query(on: database).join(
            UserRecord.self, on: \SessionRecord.$user.$id == \UserRecord.$id
        )
        .filter(\.$kind == .api).filter(\.$expiresAt > Date()).sort(\.$createdAt, .descending).limit(3)
        .fields(for: SessionRecord.self).fields(for: UserRecord.self).query
        return [("read", read), ("count", count), ("create", create), ("update", update), ("delete", delete)]
    }

    /// The application's database on SQLite, or nil on PostgreSQL.
    static func embedded(_ app: TestContext) -> EmbeddedDatabase? {
        app.database as? EmbeddedDatabase
    }

    @Test("each kind of model query is written exactly as in SQLite's own dialect")
    func sameText() async throws {
        try await withTestApp { app in
            guard let database = Self.embedded(app) else { return }
            let plain = EmbeddedDatabase(
                context: database.context, store: database.store, writing: nil,
                dialect: PlainQuoting(base: database.dialect))
            for (name, query) in Self.queries(on: app.database) {
                let statement = ModelStatement.of(query)
                let written = plain.serialize(statement)
                let driver = database.serialize(statement)
                #expect(written.sql == driver.sql, "\(name)")
                #expect(written.binds.count == driver.binds.count && !written.binds.isEmpty, "\(name)")
            }
            #expect(
                plain.serialize(ModelStatement.of(Self.queries(on: app.database)[0].1)).sql.contains(#"JOIN "users""#))
        }
    }

    @Test("a joined model, a created row and an aggregate read back through it")
    func sameResults() async throws {
        try await withTestApp { app in
            // setup
            let (client, _) = try await app.patient("ada@example.org", name: "Ada")
            let token = try #require(client.token)

            // act: the join every signed-in request makes, through the application's database
            let authenticated = try await SessionService(database: app.database, services: app.app.interlude)
                .authenticate(token: token, kind: .api)
            let refused = try await SessionService(database: app.database, services: app.app.interlude)
                .authenticate(token: token + "x", kind: .api)
            let sessions = try await SessionRecord.query(on: app.database).all()

            // verify
            #expect(authenticated?.user.email == "ada@example.org" && authenticated?.user.role == .patient)
            #expect(
                authenticated?.session.id == sessions.first?.id
                    && authenticated?.session.expiresAt == sessions.first?.expiresAt)
            #expect(refused == nil && sessions.count == 1)
        }
    }

    @Test("a model query's text is kept per shape: other values share it, any other part of the query does not")
    func shapes() async throws {
        try await withTestApp { app in
            let (a, b) = (UUID(), UUID())
            func shape(_ query: QueryBuilder<PromptRecord>) -> ModelStatement.Shape? {
                var shape = ModelStatement.Shape()
                return shape.add(query.query) ? shape : nil
            }
            let base = { PromptRecord.query(on: app.database) }
            let first = try #require(shape(base().filter(\.$patient.$id == a).sort(\.$opensAt).limit(5)))
            let second = try #require(shape(base().filter(\.$patient.$id == b).sort(\.$opensAt).limit(5)))
            let others = [
                base().filter(\.$patient.$id == a).sort(\.$opensAt).limit(6),
                base().filter(\.$patient.$id == a).sort(\.$opensAt, .descending).limit(5),
                base().filter(\.$patient.$id != a).sort(\.$opensAt).limit(5),
                base().filter(\.$patient.$id ~~ [a, b]).sort(\.$opensAt).limit(5),
                base().filter(\.$patient.$id ~~ [a]).sort(\.$opensAt).limit(5),
                base().filter(\.$responseID == nil).sort(\.$opensAt).limit(5),
                base().filter(\.$responseID == a).sort(\.$opensAt).limit(5),
            ].compactMap(shape)
            #expect(first.key == second.key)
            #expect(first.binds.count == 1 && (first.binds[0] as? UUID) == a && (second.binds[0] as? UUID) == b)
            #expect(others.count == 7 && Set(others.map(\.key) + [first.key]).count == 8)
            #expect(shape(base().filter(\.$instrumentKey, .contains(inverse: false, .prefix), "pss")) == nil)
        }
    }

    @Test("rows read through kept texts are the rows the values ask for")
    func keptTextsReadTheirOwnRows() async throws {
        try await withTestApp { app in
            // setup
            let (_, ada) = try await app.patient("ada@example.org", name: "Ada")
            let (_, bob) = try await app.patient("bob@example.org", name: "Bob")

            // act: the same question three times, for two people and nobody
            var emails: [String?] = []
            for id in [ada, bob, UUID()] {
                emails.append(try await UserRecord.query(on: app.database).filter(\.$id == id).first()?.email)
            }

            // verify
            #expect(emails == ["ada@example.org", "bob@example.org", nil])
        }
    }

    @Test("a sync's rows read names as their cases and NULL as nil, and refuse a name no case has")
    func namesAndOptionals() throws {
        let columns = SQLiteColumns(["status", "at", "gone"])
        let row = SQLiteResultRow(columns: columns, values: [.text("completed"), .float(1_772_438_400), .null])
        let unknown = SQLiteResultRow(columns: columns, values: [.text("finished"), .null, .null])

        #expect(try row.decodeName(column: "status", as: PromptStatus.self) == .completed)
        #expect(try row.decodeOptional(column: "at", as: Date.self) == Date(timeIntervalSince1970: 1_772_438_400))
        #expect(try row.decodeOptional(column: "gone", as: UUID.self) == nil)
        #expect(throws: DecodingError.self) { try unknown.decodeName(column: "status", as: PromptStatus.self) }
        #expect(try unknown.decodeOptional(column: "at", as: Date.self) == nil)
    }
}
