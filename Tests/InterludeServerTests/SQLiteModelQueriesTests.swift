import FluentKit
import Foundation
import SQLKit
import Testing

@testable import InterludeServer

/// Model queries on SQLite are written out by Interlude rather than by the driver: the text must be the driver's,
/// and what they read and write the same.
@Suite("Model queries on SQLite")
struct SQLiteModelQueriesTests {
    /// One query of each kind, the read with a join and a sort.
    static func queries(on database: any Database) -> [(String, DatabaseQuery)] {
        let id = UUID()
        var create = SettingRecord.query(on: database).field(\.$id).field(\.$value).field(\.$updatedAt)
            .set(\.$id, to: "k").set(\.$value, to: "v").set(\.$updatedAt, to: Date()).query
        create.action = .create
        var count = PromptRecord.query(on: database).filter(\.$patient.$id == id).query
        count.action = .aggregate(.field(.path([.id], schema: PromptRecord.schema), .count))
        var update = PromptRecord.query(on: database).filter(\.$id == id).field(\.$status).set(\.$status, to: .completed).query
        update.action = .update
        var delete = PromptRecord.query(on: database).filter(\.$id ~~ [id, UUID()]).query
        delete.action = .delete
        let read = SessionRecord.query(on: database).join(UserRecord.self, on: \SessionRecord.$user.$id == \UserRecord.$id)
            .filter(\.$kind == .api).filter(\.$expiresAt > Date()).sort(\.$createdAt, .descending).limit(3)
            .fields(for: SessionRecord.self).fields(for: UserRecord.self).query
        return [("read", read), ("count", count), ("create", create), ("update", update), ("delete", delete)]
    }

    @Test("each kind of model query is written exactly as the SQLite driver writes it")
    func sameText() async throws {
        try await withTestApp { app in
            guard app.settings.database.isSQLite else { return }
            let plain = SQLiteModelQueries(app.database)
            for (name, query) in Self.queries(on: app.database) {
                let statement = SQLiteModelQueries.statement(query)
                let written = plain.serialize(statement)
                let driver = app.sql.serialize(statement)
                #expect(written.sql == driver.sql, "\(name)")
                #expect(written.binds.count == driver.binds.count && !written.binds.isEmpty, "\(name)")
            }
            #expect(plain.serialize(SQLiteModelQueries.statement(Self.queries(on: app.database)[0].1)).sql.contains(#"JOIN "users""#))
        }
    }

    @Test("a joined model, a created row and an aggregate read back through them as through the driver")
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
            let sessions = try await SessionRecord.query(on: app.database).count()

            // verify
            #expect(authenticated?.user.email == "ada@example.org" && authenticated?.session.user.role == .patient)
            #expect(refused == nil && sessions == 1)
        }
    }
}
