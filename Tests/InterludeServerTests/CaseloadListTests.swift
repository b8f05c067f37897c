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

    @Test(
        "pages keep everyone exactly once while clients are paired in between, newest activity first and in a name order"
    )
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
                app.clock.advance(by: 1)
                let (patient, _) = try await app.patient("\(name.lowercased())\(added)@example.org", name: name)
                try await app.pair(patient, with: therapist)
            }

            // act
            let newestFirst = try await Self.pages(therapist, "/patients?limit=2&sort=lastActivity") { _ in
                try await addClient("Newcomer")
            }
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

    @Test(
        "words find the shown name, pseudonym or email; days keep who was last active then; wrong parameters are named, on the API and the console"
    )
    func search() async throws {
        try await withTestApp { app in
            // setup
            let (therapist, _) = try await app.staff("therapist", "tess@example.org")
            var ids: [String: UUID] = [:]
            for (name, email) in [
                ("Ada", "ada@example.org"), ("Grace", "grace@navy.example"), ("Hedy", "hedy@example.org"),
            ] {
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
            try await UserRecord.query(on: app.database).filter(\.$id == ids["Hedy"]!).set(\.$lastActiveAt, to: nil)
                .update()
            let pseudonym = try #require(
                try await PatientProfileRecord.query(on: app.database).filter(\.$user.$id == ids["Grace"]!).first()?
                    .pseudonym)
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
            let badPage = try await therapist.send(.GET, "/patients?limit=2&cursor=nonsense")
            let badLimit = try await therapist.send(.GET, "/patients?limit=0")
            let console = ConsoleBrowser(app)
            _ = try await console.signIn("tess@example.org")
            let found = try await console.get("/console/patients?q=navy")
            let wrong = try await console.get("/console/patients?from=someday")

            // verify
            #expect(byEmail == ["Grace"] && byPseudonym == ["Grace"] && byShownName == ["Hédy Kiesler"])
            #expect(lastWeek == ["Grace"], "no activity is outside every range")
            #expect(byActivity == ["Grace", "Ada", "Hédy Kiesler"])
            #expect(
                refused.status == .unprocessableEntity && Set(refused.body.problemFields) == ["sort", "status", "to"],
                "\(refused.text)")
            #expect(badPage.status == .unprocessableEntity && badPage.body.problemFields == ["cursor"])
            #expect(badLimit.status == .unprocessableEntity && badLimit.body.problemFields == ["limit"], "the door")
            #expect(found.status == .ok && found.html.contains("Grace") && !found.html.contains(">Ada<"))
            #expect(
                wrong.status == .unprocessableEntity && wrong.html.contains("id=\"from-error\"")
                    && wrong.html.contains(">Ada<"))
        }
    }

    @Test(
        "by default the caseload is in order of risk: high-priority alerts, then any alert, then the longest without activity; an answer counts as activity"
    )
    func riskOrder() async throws {
        try await withTestApp { app in
            // setup
            let (therapist, _) = try await app.staff("therapist", "tess@example.org")
            var ids: [String: UUID] = [:]
            for name in ["Ada", "Grace", "Hedy", "Katherine", "Radia"] {
                let (patient, id) = try await app.patient("\(name.lowercased())@example.org", name: name)
                try await app.pair(patient, with: therapist)
                ids[name] = id
            }
            let now = app.clock.now
            for (name, daysAgo) in [("Ada", 1), ("Grace", 2), ("Hedy", 20), ("Katherine", 10), ("Radia", 30)] {
                try await UserRecord.query(on: app.database).filter(\.$id == ids[name]!)
                    .set(\.$lastActiveAt, to: now.addingTimeInterval(-Double(daysAgo) * 86_400)).update()
            }
            let practice = try #require(
                try await EnrollmentRecord.query(on: app.database).filter(\.$patient.$id == ids["Ada"]!).first()
            ).$study.id
            let alerts = AlertService(database: app.database, services: app.app.interlude)
            _ = try await alerts.raise(
                about: ids["Ada"]!, studyID: practice, priority: .high, reason: "crisis", firingID: nil)
            _ = try await alerts.raise(
                about: ids["Grace"]!, studyID: practice, priority: .normal, reason: "missed", firingID: nil)
            // Radia used the app a month ago, and answered a questionnaire five days ago.
            let answered = now.addingTimeInterval(-5 * 86_400)
            try await ResponseRecord(
                id: UUID(), patientID: ids["Radia"]!, promptID: nil, instrumentKey: "phq-9", instrumentVersion: 1,
                sealedAnswers: try app.app.interlude.cipher.seal("{}"), scores: "[]", openedAt: nil, startedAt: nil,
                completedAt: answered, receivedAt: answered
            ).create(on: app.database)

            // act
            let rows = try await therapist.send(.GET, "/patients").decoded([Components.Schemas.CaseloadPatient].self)
            let console = ConsoleBrowser(app)
            _ = try await console.signIn("tess@example.org")
            let page = try await console.get("/console/patients")

            // verify
            #expect(rows.map { $0.name ?? "" } == ["Ada", "Grace", "Hedy", "Katherine", "Radia"])
            let radia = try #require(rows.first { $0.name == "Radia" }?.lastActivityAt)
            #expect(abs(radia.timeIntervalSince(answered)) < 1, "the answer, not the month-old use of the app")
            #expect(page.html.contains("1 high-priority") && page.html.contains("1 open"))
            #expect(page.html.contains("Compliance: questionnaires answered / missed / still open"))
        }
    }

    /// A list of the patient's data: how it is reached, by whom, and how one more item is added to it.
    enum PatientList: String, CaseIterable {
        case ownMoods, patientMoods, prompts, ownInterventions, appointments
    }

    @Test(
        "every kind of list pages without losing or repeating an item while items are added, newest at the start and oldest at the end",
        arguments: PatientList.allCases)
    func listPages(_ list: PatientList) async throws {
        try await withTestApp { app in
            // setup
            let (therapist, _) = try await app.staff("therapist", "tess@example.org")
            let (patient, patientID) = try await app.patient("ada@example.org")
            try await app.pair(patient, with: therapist)
            var made = 0
            /// Adds one item `hours` from now (negative: in the past); answers its id.
            func add(hours: Double) async throws -> String {
                made += 1
                let at = app.clock.now.addingTimeInterval(hours * 3600)
                let reply: APIClient.Reply
                switch list {
                case .ownMoods, .patientMoods:
                    reply = try await patient.send(.POST, "/me/moods", json: MoodAPITests.mood(app, hoursAgo: -hours))
                case .prompts:
                    reply = try await therapist.send(
                        .POST, "/patients/\(patientID)/prompts",
                        json: [
                            "instrumentKey": "phq-9",
                            "opensAt": QuestionnaireAPITests.iso(at.addingTimeInterval(-3600)),
                            "closesAt": QuestionnaireAPITests.iso(at),
                        ])
                case .ownInterventions:
                    reply = try await therapist.send(
                        .POST, "/patients/\(patientID)/interventions", json: InterventionTests.walk)
                case .appointments:
                    reply = try await therapist.send(
                        .POST, "/patients/\(patientID)/appointments",
                        json: ScheduleAPITests.appointment("Session \(made)", at: at))
                }
                try #require(reply.status == .created, "\(reply.text)")
                return try #require(reply.body["id"].string)
            }
            let path =
                switch list {
                case .ownMoods: "/me/moods"
                case .patientMoods: "/patients/\(patientID)/moods"
                case .prompts: "/patients/\(patientID)/prompts"
                case .ownInterventions: "/me/interventions"
                case .appointments: "/patients/\(patientID)/appointments"
                }
            let reader = list == .ownMoods || list == .ownInterventions ? patient : therapist
            var first: [String] = []
            for hour in 1...5 {
                if list == .ownInterventions { app.clock.advance(by: 60) }
                first.append(
                    try await add(
                        hours: list == .appointments || list == .prompts ? Double(24 + hour) : Double(-24 - hour)))
            }

            // act
            var late: [String] = []
            let pages = try await Self.pages(reader, path + "?limit=2") { _ in
                if list == .ownInterventions { app.clock.advance(by: 60) }
                // Where the list begins: the newest, the soonest appointment, the prompt closing last.
                late.append(try await add(hours: list == .appointments ? 2 : list == .prompts ? 100 : -1))
            }

            // verify
            let seen = pages.flatMap { $0.compactMap { $0["id"].string } }
            #expect(Set(seen) == Set(first), "each item once, none of those added before the cursor: \(seen)")
            #expect(seen.count == first.count && pages.map(\.count) == [2, 2, 1])
            let again = try await Self.pages(reader, path + "?limit=200")
            #expect(Set(again.flatMap { $0.compactMap { $0["id"].string } }) == Set(first + late))
        }
    }

    /// Views computed over a range the caller names (days of samples, days of a preview) or a fixed set, answered
    /// whole.
    static let wholeLists = ["getMyResults", "getMySampleDays", "listMySampleTypes", "previewSchedule"]

    /// The read operations of the API document that answer an array, and whether each takes a cursor.
    static func lists(in document: String) -> [(id: String, paged: Bool)] {
        var lists: [(id: String, paged: Bool)] = []
        var block: [Substring] = []
        func close() {
            defer { block = [] }
            guard block.first?.hasPrefix("    get:") == true,
                let line = block.first(where: { $0.hasPrefix("      operationId: ") }),
                let ok = block.firstIndex(where: { $0.hasPrefix("        '200':") })
            else { return }
            let answer = block[ok...].prefix { !$0.hasPrefix("        default:") }
            guard answer.contains(where: { $0.contains("type: array") }) else { return }
            lists.append(
                (
                    String(line.dropFirst("      operationId: ".count)),
                    block.contains { $0.contains("parameters/Cursor") }
                ))
        }
        for line in document.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("  /") || (line.hasPrefix("    ") && !line.hasPrefix("     ") && line.hasSuffix(":")) {
                close()
            }
            block.append(line)
        }
        close()
        return lists
    }

    @Test("every list operation of the API document takes a cursor and a limit, but the views computed over a range")
    func everyListPages() async throws {
        try await withTestApp { app in
            let document = try await app.app.testing().sendRequest(.GET, "/api/v1/openapi.yaml").body.string
            let lists = Self.lists(in: document)
            #expect(lists.count > 30)
            #expect(lists.filter { !$0.paged }.map(\.id).sorted() == Self.wholeLists.sorted())
        }
    }
}
