import Foundation
import InterludeCore
import NIOHTTP1
import Testing

@testable import InterludeServer

/// One console request: a page to get or a form to post, in the actor's browser unless the row needs a fresh one
/// (to sign in, out, or change a password).
struct ConsoleRequest: Sendable {
    let method: HTTPMethod
    let path: String
    var form: [(String, String)] = []
    var browser: (@Sendable (AccessCell) async throws -> ConsoleBrowser)? = nil

    static func get(_ path: String) -> Self { Self(method: .GET, path: path) }
    static func post(_ path: String, _ form: [(String, String)] = []) -> Self {
        Self(method: .POST, path: path, form: form)
    }
}

/// One route of the console, as the router names it.
struct ConsoleRow: MatrixRow {
    let route: String
    var name: String { route }
    let scoped: Bool
    let expect: Expectation
    /// The audit log names every patient by design; only an administrator reads it.
    let auditLog: Bool
    let request: @Sendable (AccessCell) async throws -> ConsoleRequest

    init(
        _ route: String, scoped: Bool = false, auditLog: Bool = false, _ expect: String,
        _ request: @escaping @Sendable (AccessCell) async throws -> ConsoleRequest
    ) {
        self.route = route
        self.scoped = scoped
        self.auditLog = auditLog
        self.expect = Expectation(expect)
        self.request = request
    }
}

/// The console as each actor sees it: signed in for staff, signed out for patients, who have no console.
struct ConsoleBrowsers {
    private let browsers: [AccessWorld.Actor: ConsoleBrowser]

    init(_ world: AccessWorld) async throws {
        var browsers: [AccessWorld.Actor: ConsoleBrowser] = [:]
        let outsider = ConsoleBrowser(world.app)
        for actor in AccessWorld.Actor.allCases {
            switch actor {
            case .patientSelf, .otherPatient:
                browsers[actor] = outsider
            case .studyResearcherNotSharing:
                continue
            default:
                let browser = ConsoleBrowser(world.app)
                let signedIn = try await browser.signIn(world.email(actor))
                try #require(signedIn.status == .seeOther)
                _ = try await browser.get("/console/password")
                browsers[actor] = browser
            }
        }
        browsers[.studyResearcherNotSharing] = browsers[.studyResearcher]
        self.browsers = browsers
    }

    subscript(actor: AccessWorld.Actor) -> ConsoleBrowser { browsers[actor]! }
}

extension ConsoleRow {
    private static let staffOnly = "self login, other login"

    /// A browser signed in to a fresh account like the actor's (signed out for patients).
    private static func freshBrowser(_ cell: AccessCell) async throws -> ConsoleBrowser {
        let browser = ConsoleBrowser(cell.world.app)
        guard ![.patientSelf, .otherPatient].contains(cell.actor) else { return browser }
        let me = try await cell.world.freshAccount(like: cell.actor).send(.GET, "/me")
        _ = try await browser.signIn(me.body["email"].string ?? "")
        _ = try await browser.get("/console/password")
        return browser
    }

    static let account: [ConsoleRow] = [
        ConsoleRow("GET /console/login", "* 200") { _ in
            ConsoleRequest(method: .GET, path: "/console/login", browser: { ConsoleBrowser($0.world.app) })
        },
        ConsoleRow("POST /console/login", "* 303, self 403, other 403") { cell in
            ConsoleRequest(
                method: .POST, path: "/console/login",
                form: [("email", cell.world.email(cell.actor)), ("password", TestContext.password), ("next", "")],
                browser: { cell in
                    let browser = ConsoleBrowser(cell.world.app)
                    _ = try await browser.get("/console/login")
                    return browser
                })
        },
        ConsoleRow("POST /console/logout", "* login") { _ in
            ConsoleRequest(method: .POST, path: "/console/logout", browser: freshBrowser)
        },
        ConsoleRow("GET /console/password", "\(staffOnly), * 200") { _ in .get("/console/password") },
        ConsoleRow("POST /console/password", "\(staffOnly), * 303") { _ in
            ConsoleRequest(
                method: .POST, path: "/console/password",
                form: [
                    ("currentPassword", TestContext.password), ("newPassword", "a different long password"),
                    ("repeatPassword", "a different long password"),
                ],
                browser: freshBrowser)
        },
        ConsoleRow("POST /console/preferences", "\(staffOnly), * 303") { _ in
            .post("/console/preferences", [("locale", "en"), ("timeZone", "Europe/Vienna")])
        },
        ConsoleRow("GET /console", "\(staffOnly), * 303") { _ in .get("/console") },
        ConsoleRow("POST /console/two-factor", "\(staffOnly), * 422") { _ in
            .post("/console/two-factor", [("code", "000000")])
        },
        ConsoleRow("POST /console/two-factor/disable", "\(staffOnly), * 303") { _ in
            .post("/console/two-factor/disable", [("currentPassword", TestContext.password), ("code", "000000")])
        },
    ]

    static let administration: [ConsoleRow] = [
        ConsoleRow("GET /console/users", "\(staffOnly), * 403, admin 200") { _ in .get("/console/users") },
        ConsoleRow("POST /console/users", "\(staffOnly), * 403, admin 201") { _ in
            .post(
                "/console/users",
                [
                    ("email", "staff-\(UUID().uuidString.prefix(8))@praxis.example"), ("name", "New"),
                    ("role", "therapist"),
                ])
        },
        ConsoleRow("POST /console/users/:userID/active", "\(staffOnly), * 403, admin 303") { cell in
            let (_, id) = try await cell.world.app.staff(
                "therapist", "leaving-\(UUID().uuidString.prefix(8))@praxis.example")
            return .post("/console/users/\(id)/active", [("active", "false")])
        },
        ConsoleRow("POST /console/users/:userID/two-factor/reset", "\(staffOnly), * 403, admin 303") { cell in
            let (_, id) = try await cell.world.app.staff(
                "therapist", "lost-phone-\(UUID().uuidString.prefix(8))@praxis.example")
            return .post("/console/users/\(id)/two-factor/reset")
        },
        ConsoleRow("POST /console/users/:userID", "\(staffOnly), * 403, admin 303") { cell in
            let (_, id) = try await cell.world.app.staff(
                "researcher", "renamed-\(UUID().uuidString.prefix(8))@praxis.example")
            return .post(
                "/console/users/\(id)",
                [("name", "Dr. New Name"), ("email", "new-\(UUID().uuidString.prefix(8))@praxis.example")])
        },
        ConsoleRow("POST /console/users/:userID/password", "\(staffOnly), * 403, admin 200") { cell in
            let (_, id) = try await cell.world.app.staff(
                "therapist", "forgot-\(UUID().uuidString.prefix(8))@praxis.example")
            return .post("/console/users/\(id)/password")
        },
        ConsoleRow("POST /console/users/:userID/delete", "\(staffOnly), * 403, admin 303") { cell in
            let (_, id) = try await cell.world.app.staff(
                "therapist", "gone-\(UUID().uuidString.prefix(8))@praxis.example")
            return .post("/console/users/\(id)/delete", [("confirm", "yes")])
        },
        ConsoleRow("GET /console/audit", auditLog: true, "\(staffOnly), * 403, admin 200") { _ in .get("/console/audit")
        },
        ConsoleRow("GET /console/settings", "\(staffOnly), * 403, admin 200") { _ in .get("/console/settings") },
        ConsoleRow("POST /console/settings", "\(staffOnly), * 403, admin 303") { _ in
            .post(
                "/console/settings",
                [
                    ("privacyVersion", "1"), ("privacyDe", "Datenschutz"), ("privacyEn", "Privacy"),
                    ("imprintDe", "Impressum"), ("imprintEn", "Imprint"),
                ])
        },
        ConsoleRow("POST /console/settings/act", "\(staffOnly), * 403, admin 303") { _ in
            .post(
                "/console/settings/act",
                ACTProcess.allCases.flatMap { [("\($0.rawValue)_de", "Text"), ("\($0.rawValue)_en", "Text")] })
        },
        ConsoleRow("POST /console/settings/name", "\(staffOnly), * 403, admin 303") { _ in
            .post("/console/settings/name", [("installationName", "Praxis am Ring")])
        },
        ConsoleRow("POST /console/settings/two-factor", "\(staffOnly), * 403, admin 303") { _ in
            .post("/console/settings/two-factor")
        },
    ]

    static let caseload: [ConsoleRow] = [
        ConsoleRow("GET /console/patients", "\(staffOnly), * 403, own 200, otherT 200") { _ in .get("/console/patients")
        },
        ConsoleRow(
            "GET /console/patients/:patientID", "\(staffOnly), * 403, otherT 404, own 200, endedT 200, elsewhereT 200"
        ) { cell in .get("/console/patients/\(cell.subject.id)") },
        ConsoleRow(
            "POST /console/patients/:patientID/prompts",
            "\(staffOnly), * 403, otherT 404, own 201, endedT 409, elsewhereT 409"
        ) { cell in
            .post(
                "/console/patients/\(cell.subject.id)/prompts",
                [("instrumentKey", "mood-vas"), ("opensAt", "2026-03-02T10:00"), ("closesAt", "2026-03-03T10:00")])
        },
        ConsoleRow(
            "POST /console/patients/:patientID/appointments",
            "\(staffOnly), * 403, otherT 404, own 201, endedT 409, elsewhereT 409"
        ) { cell in
            .post(
                "/console/patients/\(cell.subject.id)/appointments",
                [("title", "Session"), ("date", "2026-03-10"), ("startTime", "10:00"), ("endTime", "10:50")])
        },
        ConsoleRow(
            "POST /console/patients/:patientID/appointments/:appointmentID/decision",
            "\(staffOnly), * 403, otherT 404, own 200, endedT 409, elsewhereT 409"
        ) { cell in
            .post(
                "/console/patients/\(cell.subject.id)/appointments/\(try await cell.world.freshSession(requested: true))/decision",
                [("grant", "no"), ("version", "2")])
        },
        ConsoleRow(
            "POST /console/patients/:patientID/appointments/:appointmentID/cancel",
            "\(staffOnly), * 403, otherT 404, own 200, endedT 409, elsewhereT 409"
        ) { cell in
            .post("/console/patients/\(cell.subject.id)/appointments/\(try await cell.world.freshSession())/cancel", [])
        },
        ConsoleRow(
            "GET /console/patients/:patientID/responses/:responseID", scoped: true,
            "\(staffOnly), * 403, otherT 404, own 404, own@practice 200"
        ) { cell in
            .get("/console/patients/\(cell.subject.id)/responses/\(cell.subject.response(cell.scope))")
        },
        ConsoleRow(
            "GET /console/patients/:patientID/responses/:responseID/fhir", scoped: true,
            "\(staffOnly), * 403, otherT 404, own 404, own@practice 200"
        ) { cell in
            .get("/console/patients/\(cell.subject.id)/responses/\(cell.subject.response(cell.scope))/fhir")
        },
        ConsoleRow(
            "GET /console/patients/:patientID/record",
            "\(staffOnly), * 403, otherT 404, own 200, endedT 200, elsewhereT 200"
        ) { cell in
            .get("/console/patients/\(cell.subject.id)/record")
        },
        ConsoleRow(
            "POST /console/patients/:patientID/treatment",
            "\(staffOnly), * 403, otherT 404, own 200, endedT 409, elsewhereT 409"
        ) { cell in
            .post(
                "/console/patients/\(cell.subject.id)/treatment",
                [("displayName", "A."), ("therapyStart", "2026-03-10"), ("therapyEnd", "")])
        },
        ConsoleRow(
            "GET /console/patients/:patientID/thoughts",
            "\(staffOnly), * 403, otherT 404, own 200, endedT 200, elsewhereT 200"
        ) { cell in
            .get("/console/patients/\(cell.subject.id)/thoughts?q=nobody&from=2026-01-01")
        },
        ConsoleRow(
            "POST /console/patients/:patientID/thoughts",
            "\(staffOnly), * 403, otherT 404, own 201, endedT 409, elsewhereT 409"
        ) { cell in
            .post("/console/patients/\(cell.subject.id)/thoughts", [("text", "Example thought \(UUID())")])
        },
        ConsoleRow(
            "GET /console/patients/:patientID/report",
            "\(staffOnly), * 403, otherT 404, own 200, endedT 200, elsewhereT 200"
        ) { cell in
            .get("/console/patients/\(cell.subject.id)/report?from=2026-01-01&to=2026-12-31")
        },
        ConsoleRow(
            "POST /console/patients/:patientID/notes",
            "\(staffOnly), * 403, otherT 404, own 303, endedT 409, elsewhereT 409"
        ) { cell in
            .post("/console/patients/\(cell.subject.id)/notes", [("day", "2026-03-02"), ("text", "Holiday")])
        },
        ConsoleRow(
            "POST /console/patients/:patientID/notes/:noteID/delete",
            "\(staffOnly), * 403, otherT 404, own 303, endedT 409, elsewhereT 409"
        ) { cell in
            .post(
                "/console/patients/\(cell.subject.id)/notes/\(try await cell.world.freshNote(on: cell.subject))/delete",
                [])
        },
        ConsoleRow("GET /console/schedule/:patientID", "\(staffOnly), * 404, own 200, res 200") { cell in
            .get("/console/schedule/\(cell.subject.id)")
        },
        ConsoleRow(
            "GET /console/patients/:patientID/intersession",
            "\(staffOnly), * 403, otherT 404, own 200, endedT 200, elsewhereT 200"
        ) { cell in
            .get("/console/patients/\(cell.subject.id)/intersession")
        },
        ConsoleRow(
            "POST /console/patients/:patientID/interventions",
            "\(staffOnly), * 403, otherT 404, own 303, endedT 409, elsewhereT 409"
        ) { cell in
            .post("/console/patients/\(cell.subject.id)/interventions", [("kind", "task"), ("text", "A short walk")])
        },
        ConsoleRow(
            "POST /console/patients/:patientID/interventions/template", scoped: true,
            "\(staffOnly), * 403, otherT 404, own 404, own@practice 303"
        ) { cell in
            .post(
                "/console/patients/\(cell.subject.id)/interventions/template",
                [("templateID", cell.world.template(cell.scope))])
        },
        ConsoleRow("GET /console/pairing-codes", "\(staffOnly), * 403, own 200, otherT 200") { _ in
            .get("/console/pairing-codes")
        },
        ConsoleRow("POST /console/pairing-codes", "\(staffOnly), * 403, own 201, otherT 201") { _ in
            .post("/console/pairing-codes", [("count", "1")])
        },
        ConsoleRow("POST /console/invitations", "\(staffOnly), * 403, own 201, otherT 201") { _ in
            .post(
                "/console/invitations",
                [("email", "invited-\(UUID().uuidString.prefix(8).lowercased())@example.org"), ("locale", "en")])
        },
        ConsoleRow(
            "POST /console/patients/:patientID/password-reset",
            "\(staffOnly), * 403, otherT 404, own 200, endedT 409, elsewhereT 409"
        ) { cell in
            .post("/console/patients/\(cell.subject.id)/password-reset", [])
        },
        ConsoleRow("GET /console/pairing-codes/sheet", "\(staffOnly), * 403, own 200, otherT 200") { _ in
            .get("/console/pairing-codes/sheet")
        },
        ConsoleRow("GET /console/profile", "\(staffOnly), * 403, own 200, otherT 200") { _ in .get("/console/profile")
        },
        ConsoleRow("POST /console/profile", "\(staffOnly), * 403, own 303, otherT 303") { _ in
            .post("/console/profile", [("fullName", "Dr. Someone")])
        },
        ConsoleRow("GET /console/alerts", "\(staffOnly), * 200") { _ in .get("/console/alerts") },
        ConsoleRow(
            "POST /console/alerts/:alertID/acknowledgement", scoped: true,
            "\(staffOnly), * 404, own@practice 303, res@research 303, resNS@research 303"
        ) { cell in
            .post("/console/alerts/\(cell.subject.alert(cell.scope))/acknowledgement", [("note", "Called")])
        },
    ]

    private static let team = "own@practice %@, res@research %@, resNS@research %@, admin@research %@"
    private static func team(_ status: Int) -> String { team.replacingOccurrences(of: "%@", with: String(status)) }

    static let studies: [ConsoleRow] = [
        ConsoleRow("GET /console/studies", "\(staffOnly), * 200") { _ in .get("/console/studies") },
        ConsoleRow("GET /console/studies/new", "\(staffOnly), * 403, res 200, resNS 200, otherR 200, admin 200") { _ in
            .get("/console/studies/new")
        },
        ConsoleRow("POST /console/studies/new", "\(staffOnly), * 403, res 303, resNS 303, otherR 303, admin 303") { _ in
            .post("/console/studies/new", studyForm)
        },
        ConsoleRow("GET /console/studies/:studyID", scoped: true, "\(staffOnly), * 404, \(team(200))") { cell in
            .get("/console/studies/\(cell.studyID)")
        },
        ConsoleRow(
            "GET /console/studies/:studyID/edit", scoped: true,
            "\(staffOnly), * 404, own 403, otherT 403, res@research 200, resNS@research 200, admin@research 200"
        ) { cell in
            .get("/console/studies/\(cell.studyID)/edit")
        },
        ConsoleRow(
            "POST /console/studies/:studyID/edit", scoped: true,
            "\(staffOnly), * 404, own 403, otherT 403, res@research 303, resNS@research 303, admin@research 303"
        ) { cell in
            .post("/console/studies/\(cell.studyID)/edit", studyForm)
        },
        ConsoleRow(
            "POST /console/studies/:studyID/enrollments/:enrollmentID/decision", scoped: true,
            "\(staffOnly), * 404, own 403, otherT 403, res@research 303, resNS@research 303, admin@research 303"
        ) { cell in
            let enrollment = try await cell.world.pendingEnrollment(cell.scope)
            return .post(
                "/console/studies/\(cell.studyID)/enrollments/\(enrollment)/decision", [("decision", "decline")])
        },
        ConsoleRow(
            "GET /console/studies/:studyID/monitor", scoped: true,
            "\(staffOnly), * 404, own@practice 200, res@research 200, resNS@research 200, admin@research 403"
        ) { cell in
            .get("/console/studies/\(cell.studyID)/monitor")
        },
        ConsoleRow(
            "GET /console/studies/:studyID/monitor/:patientID", scoped: true,
            "\(staffOnly), * 404, own@practice 200, res@research 200, resNS@research 404, admin@research 403"
        ) { cell in
            .get("/console/studies/\(cell.studyID)/monitor/\(cell.subject.id)")
        },
        ConsoleRow(
            "GET /console/studies/:studyID/exports", scoped: true,
            "\(staffOnly), * 404, own@practice 403, res@research 200, resNS@research 200, admin@research 403"
        ) { cell in
            .get("/console/studies/\(cell.studyID)/exports")
        },
        ConsoleRow(
            "POST /console/studies/:studyID/exports", scoped: true,
            "\(staffOnly), * 404, own@practice 403, res@research 303, resNS@research 303, admin@research 403"
        ) { cell in
            .post("/console/studies/\(cell.studyID)/exports", [("since", "")])
        },
        ConsoleRow(
            "GET /console/studies/:studyID/exports/:exportID", scoped: true,
            "\(staffOnly), * 404, own@practice 403, res@research 200, resNS@research 200, admin@research 403"
        ) { cell in
            .get("/console/studies/\(cell.studyID)/exports/\(try await cell.world.readyExport(cell.scope))")
        },
        ConsoleRow(
            "POST /console/studies/:studyID/exports/tokens", scoped: true,
            "\(staffOnly), * 404, own@practice 403, res@research 200, resNS@research 200, admin@research 403"
        ) { cell in
            .post("/console/studies/\(cell.studyID)/exports/tokens", [("name", "analysis"), ("days", "30")])
        },
        ConsoleRow(
            "POST /console/studies/:studyID/exports/tokens/:tokenID/delete", scoped: true,
            "\(staffOnly), * 404, own@practice 403, res@research 303, resNS@research 303, admin@research 403"
        ) { cell in
            .post(
                "/console/studies/\(cell.studyID)/exports/tokens/\(try await cell.world.freshToken(of: cell.actor))/delete",
                [])
        },
        ConsoleRow(
            "GET /console/studies/:studyID/consent", scoped: true,
            "\(staffOnly), * 404, res@research 200, resNS@research 200, admin@research 200"
        ) { cell in
            .get("/console/studies/\(cell.studyID)/consent")
        },
        ConsoleRow(
            "POST /console/studies/:studyID/consent", scoped: true,
            "\(staffOnly), * 404, own@practice 403, res@research 303, resNS@research 303, admin@research 303"
        ) { cell in
            .post(
                "/console/studies/\(cell.studyID)/consent",
                [
                    ("version", "c-\(UUID().uuidString.prefix(8))"), ("textEn", "I agree to take part."),
                    ("module_context", "on"),
                ])
        },
        ConsoleRow(
            "GET /console/studies/:studyID/team", scoped: true,
            "\(staffOnly), * 404, own@practice 403, res@research 200, resNS@research 200, admin@research 200"
        ) { cell in
            .get("/console/studies/\(cell.studyID)/team")
        },
        ConsoleRow(
            "POST /console/studies/:studyID/team", scoped: true,
            "\(staffOnly), * 404, own@practice 403, res@research 303, resNS@research 303, admin@research 303"
        ) { cell in
            let email = "team-\(UUID().uuidString.prefix(8).lowercased())-new@uni.example"
            _ = try await cell.world.app.staff("researcher", email)
            return .post("/console/studies/\(cell.studyID)/team", [("email", email), ("role", "researcher")])
        },
        ConsoleRow(
            "POST /console/studies/:studyID/team/:userID", scoped: true,
            "\(staffOnly), * 404, own@practice 403, res@research 303, resNS@research 303, admin@research 303"
        ) { cell in
            .post(
                "/console/studies/\(cell.studyID)/team/\(try await cell.world.freshTeamMember(cell.scope))",
                [("role", "dataManager")])
        },
        ConsoleRow(
            "POST /console/studies/:studyID/team/:userID/delete", scoped: true,
            "\(staffOnly), * 404, own@practice 403, res@research 303, resNS@research 303, admin@research 303"
        ) { cell in
            .post("/console/studies/\(cell.studyID)/team/\(try await cell.world.freshTeamMember(cell.scope))/delete")
        },
        ConsoleRow("GET /console/plans", "\(staffOnly), * 403, own 303, otherT 303") { _ in .get("/console/plans") },
        ConsoleRow("GET /console/studies/:studyID/plans", scoped: true, "\(staffOnly), * 404, \(team(200))") { cell in
            .get("/console/studies/\(cell.studyID)/plans")
        },
        ConsoleRow("POST /console/studies/:studyID/plans", scoped: true, "\(staffOnly), * 404, \(team(303))") { cell in
            .post(
                "/console/studies/\(cell.studyID)/plans",
                ConsoleScheduleTests.fixedTwiceDaily + [("target", "all"), ("action", "attach")])
        },
        ConsoleRow(
            "POST /console/studies/:studyID/plans/:planID/delete", scoped: true, "\(staffOnly), * 404, \(team(303))"
        ) { cell in
            .post("/console/studies/\(cell.studyID)/plans/\(try await cell.world.freshPlan(cell.scope))/delete")
        },
        ConsoleRow(
            "POST /console/studies/:studyID/plans/:planID/deactivate", scoped: true, "\(staffOnly), * 404, \(team(303))"
        ) { cell in
            .post("/console/studies/\(cell.studyID)/plans/\(try await cell.world.freshPlan(cell.scope))/deactivate")
        },
        ConsoleRow(
            "POST /console/studies/:studyID/plans/:planID/activate", scoped: true, "\(staffOnly), * 404, \(team(303))"
        ) { cell in
            .post("/console/studies/\(cell.studyID)/plans/\(try await cell.world.freshPlan(cell.scope))/activate")
        },
        ConsoleRow("GET /console/rules", "\(staffOnly), * 403, own 303, otherT 303") { _ in .get("/console/rules") },
        ConsoleRow("GET /console/records", "\(staffOnly), * 403, own 303, otherT 303") { _ in .get("/console/records")
        },
        ConsoleRow("GET /console/studies/:studyID/records", scoped: true, "\(staffOnly), * 404, \(team(200))") { cell in
            .get("/console/studies/\(cell.studyID)/records")
        },
        ConsoleRow("POST /console/studies/:studyID/records", scoped: true, "\(staffOnly), * 404, \(team(303))") {
            cell in
            .post(
                "/console/studies/\(cell.studyID)/records",
                [("collects[]", "event"), ("collects[]", "therapy"), ("eventTypes", "Sleepless night\nLong flight")])
        },
        ConsoleRow("GET /console/arms", "\(staffOnly), * 403, own 303, otherT 303") { _ in .get("/console/arms") },
        ConsoleRow("GET /console/studies/:studyID/arms", scoped: true, "\(staffOnly), * 404, \(team(200))") { cell in
            .get("/console/studies/\(cell.studyID)/arms")
        },
        ConsoleRow("POST /console/studies/:studyID/arms", scoped: true, "\(staffOnly), * 404, \(team(303))") { cell in
            .post(
                "/console/studies/\(cell.studyID)/arms",
                [("armName[]", "a"), ("armName[]", "b"), ("allocation", "alternating")])
        },
        ConsoleRow("GET /console/studies/:studyID/rules", scoped: true, "\(staffOnly), * 404, \(team(200))") { cell in
            .get("/console/studies/\(cell.studyID)/rules")
        },
        ConsoleRow("POST /console/studies/:studyID/rules", scoped: true, "\(staffOnly), * 404, \(team(303))") { cell in
            .post("/console/studies/\(cell.studyID)/rules", ruleForm)
        },
        ConsoleRow(
            "POST /console/studies/:studyID/rules/:ruleID/delete", scoped: true, "\(staffOnly), * 404, \(team(303))"
        ) { cell in
            .post("/console/studies/\(cell.studyID)/rules/\(try await cell.world.freshRule(cell.scope))/delete")
        },
        ConsoleRow("POST /console/studies/:studyID/templates", scoped: true, "\(staffOnly), * 404, \(team(303))") {
            cell in
            .post("/console/studies/\(cell.studyID)/templates", [("kind", "commendation"), ("text", "Well done!")])
        },
        ConsoleRow(
            "POST /console/studies/:studyID/templates/:itemID/delete", scoped: true, "\(staffOnly), * 404, \(team(303))"
        ) { cell in
            .post("/console/studies/\(cell.studyID)/templates/\(try await freshTemplate(cell))/delete")
        },
        ConsoleRow("POST /console/studies/:studyID/messages", scoped: true, "\(staffOnly), * 404, \(team(303))") {
            cell in
            .post("/console/studies/\(cell.studyID)/messages", [("text", "Notice one thing you value today.")])
        },
        ConsoleRow(
            "POST /console/studies/:studyID/messages/:itemID/delete", scoped: true, "\(staffOnly), * 404, \(team(303))"
        ) { cell in
            .post("/console/studies/\(cell.studyID)/messages/\(try await freshMessage(cell))/delete")
        },
        ConsoleRow("POST /console/studies/:studyID/message-plan", scoped: true, "\(staffOnly), * 404, \(team(303))") {
            cell in
            .post(
                "/console/studies/\(cell.studyID)/message-plan",
                [("perDay", "2"), ("windowStart", "09:00"), ("windowEnd", "20:00"), ("intent", "save")])
        },
    ]

    static let instruments: [ConsoleRow] = [
        ConsoleRow("GET /console/instruments", "\(staffOnly), * 200") { _ in .get("/console/instruments") },
        ConsoleRow("POST /console/instruments", "\(staffOnly), * 422") { _ in .post("/console/instruments") },
        ConsoleRow("GET /console/instruments/editor", "\(staffOnly), * 200") { _ in
            .get("/console/instruments/editor?key=phq-9&version=1")
        },
        ConsoleRow("POST /console/instruments/editor", "\(staffOnly), * 422") { _ in
            .post("/console/instruments/editor", [("definition", "{}"), ("study", "")])
        },
        ConsoleRow("GET /console/instruments/:key/:version", "\(staffOnly), * 200") { _ in
            .get("/console/instruments/phq-9/1")
        },
        ConsoleRow(
            "POST /console/instruments/:key/:version/pin", scoped: true,
            "\(staffOnly), * 404, own@practice 303, res@research 303, resNS@research 303, admin@research 303"
        ) { cell in
            .post("/console/instruments/phq-9/1/pin", [("study", cell.studyID.uuidString)])
        },
        ConsoleRow(
            "POST /console/instruments/:key/:version/publication", scoped: true,
            "\(staffOnly), * 404, own@practice 303, res@research 303, resNS@research 303, admin 303"
        ) { cell in
            let key = "sleep-\(UUID().uuidString.prefix(8).lowercased())"
            let imported = try await cell.world.owner(cell.scope).send(
                .POST, "/instruments?studyId=\(cell.studyID)",
                json: [
                    "key": .string(key), "title": "Sleep", "language": "en",
                    "sections": [
                        [
                            "id": "s",
                            "items": [
                                [
                                    "id": "hours", "type": "number", "text": "Hours slept", "min": 0, "max": 24,
                                    "required": true,
                                ]
                            ],
                        ]
                    ],
                ])
            try #require(imported.status == .created, "\(imported.text)")
            return .post("/console/instruments/\(key)/1/publication")
        },
        ConsoleRow("GET /console/instruments/:key/:version/fhir", "\(staffOnly), * 200") { _ in
            .get("/console/instruments/phq-9/1/fhir")
        },
    ]

    /// Rows in groups that may run side by side, each in its own world; a row may rely on one before it in its group.
    static let parts: [[ConsoleRow]] = [account + administration + instruments, caseload, studies]

    static let all: [ConsoleRow] = parts.flatMap { $0 }

    private static let studyForm: [(String, String)] = [
        ("title", "Sleep and mood"), ("description", "Four weeks"), ("consentText", "I agree."),
        ("consentVersion", "2026-1"),
        ("joinMode", "open"), ("status", "running"),
    ]

    private static let ruleForm: [(String, String)] = [
        ("name", "Low mood"), ("trigger", "submitted"), ("instrumentKey", "mood-vas"), ("mode", "all"),
        ("subject0", "item"), ("id0", "mood"), ("operator0", "lessOrEqual"), ("value0", "20"),
        ("action", "alert"), ("priority", "normal"), ("message", "Mood is low"), ("intent", "add"),
    ]

    private static func freshTemplate(_ cell: AccessCell) async throws -> String {
        let record = InterventionTemplateRecord(
            studyID: cell.studyID, kind: .task, texts: "Stretch", now: cell.world.app.clock.now)
        try await record.create(on: cell.world.app.database)
        return try record.requireID().uuidString
    }

    private static func freshMessage(_ cell: AccessCell) async throws -> String {
        let record = StudyMessageRecord(studyID: cell.studyID, texts: "Breathe", now: cell.world.app.clock.now)
        try await record.create(on: cell.world.app.database)
        return try record.requireID().uuidString
    }
}
