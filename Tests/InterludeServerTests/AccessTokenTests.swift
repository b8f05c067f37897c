import Fluent
import Foundation
import InterludeCore
import Testing
import VaporTesting

@testable import InterludeServer

@Suite("Personal access tokens for scripts that fetch exports")
struct AccessTokenTests {
    func create(_ client: APIClient, studies: [String], days: Int = 30) async throws -> Components.Schemas.AccessToken {
        let reply = try await client.send(
            .POST, "/me/tokens",
            json: ["name": "analysis", "studyIds": .array(studies.map(JSONValue.string)), "expiresInDays": .int(days)])
        try #require(reply.status == .created, "\(reply.text)")
        return try reply.decoded(Components.Schemas.AccessToken.self)
    }

    @Test("the secret is shown once and stored only as a hash; the list names the token without it")
    func shownOnce() async throws {
        try await withTestApp { app in
            // setup
            let world = try await ExportWorld.build(app)

            // act
            let token = try await create(world.researcher, studies: [world.studyID])
            let listed = try await world.researcher.send(.GET, "/me/tokens").decoded(
                [Components.Schemas.AccessToken].self)

            // verify
            let secret = try #require(token.token)
            #expect(secret.hasPrefix("ilpat_") && secret.count > 40)
            #expect(listed.map(\.id) == [token.id] && listed[0].token == nil && listed[0].scope == .exports_colon_read)
            #expect(try await app.count("access_tokens WHERE token_hash = '\(secret)'") == 0)
            #expect(try await app.count("access_tokens WHERE token_hash = '\(SecretToken.hash(secret))'") == 1)
        }
    }

    @Test("a token starts, follows and downloads exports of its study, and opens nothing else")
    func exportsOnly() async throws {
        try await withTestApp { app in
            // setup
            let world = try await ExportWorld.build(app)
            let otherStudy = try await StudyAPITests().createStudy(world.researcher, StudyAPITests.study("open"))
            let script = world.researcher.authorized(
                try #require(try await create(world.researcher, studies: [world.studyID]).token))

            // act
            let started = try await script.send(.POST, "/studies/\(world.studyID)/exports")
            let id = try started.decoded(Components.Schemas.StudyExport.self).id
            _ = try await ExportService(database: app.database, services: app.app.interlude).runPending()
            let status = try await script.send(.GET, "/exports/\(id)")
            let file = try await script.send(.GET, "/exports/\(id)/file")
            let me = try await script.send(.GET, "/me")
            let study = try await script.send(.GET, "/studies/\(world.studyID)")
            let elsewhere = try await script.send(.POST, "/studies/\(otherStudy)/exports")

            // verify
            #expect(started.status == .accepted && status.status == .ok && file.status == .ok)
            #expect(file.headers.contentType?.description == "application/zip")
            #expect(try ExportWorld.unpack(file.data)["participants.csv"] != nil)
            #expect(me.status == .unauthorized && study.status == .unauthorized)
            #expect(elsewhere.status == .forbidden)
        }
    }

    @Test("a revoked or expired token, or one whose holder left the team, opens nothing")
    func revokedExpiredOrLeft() async throws {
        try await withTestApp { app in
            // setup
            let world = try await ExportWorld.build(app)
            let revoked = try await create(world.researcher, studies: [world.studyID])
            let short = try await create(world.researcher, studies: [world.studyID], days: 1)
            let (colleague, colleagueID) = try await app.staff("researcher", "colleague@uni.example")
            let added = try await world.researcher.send(
                .POST, "/studies/\(world.studyID)/staff",
                json: ["email": "colleague@uni.example", "role": "dataManager"])
            try #require(added.status == .created)
            let theirs = try await create(colleague, studies: [world.studyID])
            let path = "/studies/\(world.studyID)/exports"

            // act
            let deleted = try await world.researcher.send(.DELETE, "/me/tokens/\(revoked.id)")
            let afterRevoke = try await world.researcher.authorized(revoked.token).send(.GET, path)
            let removed = try await world.researcher.send(.DELETE, "/studies/\(world.studyID)/staff/\(colleagueID)")
            let afterLeaving = try await colleague.authorized(theirs.token).send(.GET, path)
            let beforeExpiry = try await world.researcher.authorized(short.token).send(.GET, path)
            app.clock.advance(by: 86_401)
            let afterExpiry = try await world.researcher.authorized(short.token).send(.GET, path)

            // verify
            #expect(deleted.status == .noContent && afterRevoke.status == .unauthorized)
            #expect(removed.status == .noContent && afterLeaving.status == .notFound)
            #expect(beforeExpiry.status == .ok && afterExpiry.status == .unauthorized)
        }
    }

    @Test(
        "a token is refused for a study the person may not export, an empty name, no study or a lifetime out of range",
        arguments: [
            (JSONValue.object(["name": "", "expiresInDays": 30]), "name"),
            (JSONValue.object(["name": "x", "expiresInDays": 0]), "expiresInDays"),
            (JSONValue.object(["name": "x", "expiresInDays": 366]), "expiresInDays"),
        ] as [(JSONValue, String)])
    func refusals(_ body: JSONValue, field: String) async throws {
        try await withTestApp { app in
            // setup
            let world = try await ExportWorld.build(app)

            // act
            let reply = try await world.researcher.send(
                .POST, "/me/tokens", json: body.merging(["studyIds": [.string(world.studyID)]]))
            let none = try await world.researcher.send(
                .POST, "/me/tokens", json: ["name": "x", "studyIds": [], "expiresInDays": 30])
            let foreign = try await world.researcher.send(
                .POST, "/me/tokens", json: ["name": "x", "studyIds": [.string(UUID().uuidString)], "expiresInDays": 30])

            // verify
            #expect(reply.status == .unprocessableEntity && reply.body.problemFields == [field])
            #expect(none.body.problemFields == ["studyIds"] && foreign.body.problemFields == ["studyIds.0"])
            #expect(try await app.count("access_tokens") == 0)
        }
    }
}
