import Fluent
import Foundation
import InterludeCore
import Testing
import VaporTesting

@testable import InterludeServer

/// The therapist's caseload as a list that scales: found by words, state and days of last activity, in the order
/// asked, page by page without losing or repeating anyone while clients are added.
@Suite("Caseload list: search, filters, order and pages")
struct CaseloadListTests {
    /// Follows `Next-Cursor` through every page of `path`, running `between` after each page but the last.
    static func pages(
        _ client: APIClient, _ path: String, between: (Int) async throws -> Void = { _ in }
    ) async throws -> [[JSON]] {
        var pages: [[JSON]] = []
        var cursor: String?
        repeat {
            let separator = path.contains("?") ? "&" : "?"
            let reply = try await client.send(.GET, path + (cursor.map { "\(separator)cursor=\($0)" } ?? ""))
            try #require(reply.status == .ok, "\(reply.text)")
            pages.append(reply.body.array)
            cursor = reply.headers.first(name: "Next-Cursor")
            if cursor != nil { try await between(pages.count) }
        } while cursor != nil
        return pages
    }

    @Test("pages keep everyone exactly once while clients are paired in between, in the default and in a name order")
    func paging() async throws {
        try await withTestApp { app in
            // setup
            let (therapist, _) = try await app.staff("therapist", "tess@example.org")
            for name in ["Ada", "Grace", "Hedy", "Katherine", "Radia"] {
                let (patient, _) = try await app.patient("\(name.lowercased())@example.org", name: name)
                try await app.pair(patient, with: therapist)
            }
            var added = 0
            func addClient(_ name: String) async throws {
                added += 1
                let (patient, _) = try await app.patient("\(name.lowercased())\(added)@example.org", name: name)
                app.clock.advance(by: 1)
                try await app.pair(patient, with: therapist)
            }

            // act
            let newestFirst = try await Self.pages(therapist, "/patients?limit=2") { _ in try await addClient("Newcomer") }
            let byName = try await Self.pages(therapist, "/patients?limit=2&sort=name&order=asc") { page in
                if page <= 2 { try await addClient(page == 1 ? "Aaron" : "Zed") }
            }

            // verify
            let firstNames = newestFirst.flatMap { $0.compactMap { $0["name"].string } }
            #expect(newestFirst.map(\.count) == [2, 2, 1])
            #expect(firstNames.sorted() == ["Ada", "Grace", "Hedy", "Katherine", "Radia"], "\(firstNames)")
            let names = byName.flatMap { $0.compactMap { $0["name"].string } }
            #expect(names == ["Ada", "Grace", "Hedy", "Katherine", "Newcomer", "Newcomer", "Radia", "Zed"], "\(names)")
        }
    }

    @Test("words find the shown name, pseudonym or email; days keep who was last active then; wrong parameters are named, on the API and the console")
    func search() async throws {
        try await withTestApp { app in
            // setup
            let (therapist, _) = try await app.staff("therapist", "tess@example.org")
            var ids: [String: UUID] = [:]
            for (name, email) in [("Ada", "ada@example.org"), ("Grace", "grace@navy.example"), ("Hedy", "hedy@example.org")] {
                let (patient, id) = try await app.patient(email, name: name)
                try await app.pair(patient, with: therapist)
                ids[name] = id
            }
            _ = try await therapist.send(.PATCH, "/patients/\(ids["Hedy"]!)", json: ["displayName": "Hédy Kiesler"])
            let zone = TimeZone(identifier: "Europe/Vienna")!
            let today = LocalDate(app.clock.now, in: zone)
            for (name, daysAgo) in [("Ada", 10), ("Grace", 3)] {
                try await UserRecord.query(on: app.database).filter(\.$id == ids[name]!)
                    .set(\.$lastActiveAt, to: app.clock.now.addingTimeInterval(-Double(daysAgo) * 86_400)).update()
            }
            try await UserRecord.query(on: app.database).filter(\.$id == ids["Hedy"]!).set(\.$lastActiveAt, to: nil).update()
            let pseudonym = try #require(try await PatientProfileRecord.query(on: app.database).filter(\.$user.$id == ids["Grace"]!).first()?.pseudonym)
            func names(_ query: String) async throws -> [String] {
                try await therapist.send(.GET, "/patients?" + query).decoded([Components.Schemas.CaseloadPatient].self)
                    .map { $0.displayName ?? $0.name ?? "" }
            }

            // act
            let byEmail = try await names("q=NAVY")
            let byPseudonym = try await names("q=\(pseudonym.lowercased())")
            let byShownName = try await names("q=hedy%20kiesler")
            let lastWeek = try await names("from=\(today.adding(days: -7))&to=\(today)")
            let byActivity = try await names("sort=lastActivity&order=desc")
            let refused = try await therapist.send(.GET, "/patients?sort=age&status=gone&from=2026-05-02&to=2026-05-01")
            let badPage = try await therapist.send(.GET, "/patients?limit=0&cursor=nonsense")
            let console = ConsoleBrowser(app)
            _ = try await console.signIn("tess@example.org")
            let found = try await console.get("/console/patients?q=navy")
            let wrong = try await console.get("/console/patients?from=someday")

            // verify
            #expect(byEmail == ["Grace"] && byPseudonym == ["Grace"] && byShownName == ["Hédy Kiesler"])
            #expect(lastWeek == ["Grace"], "no activity is outside every range")
            #expect(byActivity == ["Grace", "Ada", "Hédy Kiesler"])
            #expect(refused.status == .unprocessableEntity && Set(refused.body.problemFields) == ["sort", "status", "to"], "\(refused.text)")
            #expect(badPage.status == .unprocessableEntity && Set(badPage.body.problemFields) == ["limit", "cursor"])
            #expect(found.status == .ok && found.html.contains("Grace") && !found.html.contains(">Ada<"))
            #expect(wrong.status == .unprocessableEntity && wrong.html.contains("id=\"from-error\"") && wrong.html.contains(">Ada<"))
        }
    }
}
