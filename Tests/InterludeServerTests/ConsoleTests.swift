import Fluent
import Foundation
import Testing
import VaporTesting

@testable import InterludeServer

@Suite("Console")
struct ConsoleTests {
    @Test("a console page sends someone not signed in to the sign-in page")
    func signInRequired() async throws {
        try await withTestApp { app in
            // setup
            let browser = ConsoleBrowser(app)
            // act
            let page = try await browser.get("/console/patients")
            // verify
            #expect(page.status == .seeOther)
            #expect(page.location?.hasPrefix("/console/login") == true)
        }
    }

    /// Sign-ins the console refuses, with the status and a phrase of the message shown.
    static let refusedSignIns: [(email: String, password: String, status: HTTPResponseStatus, says: String)] = [
        ("patient@example.org", TestContext.password, .forbidden, "not allowed"),
        ("nobody@example.org", "whatever it is", .unauthorized, "not correct"),
    ]

    @Test("a patient and an unknown account cannot sign in to the console", arguments: refusedSignIns)
    func refusedSignIn(_ email: String, _ password: String, _ status: HTTPResponseStatus, _ says: String) async throws {
        try await withTestApp { app in
            // setup
            _ = try await app.patient()
            let browser = ConsoleBrowser(app)
            // act
            let reply = try await browser.signIn(email, password: password)
            // verify
            #expect(reply.status == status)
            #expect(reply.html.contains(says))
            #expect(try await app.count("sessions") == 1, "only the patient's own API session")
        }
    }

    @Test("the first admin changes the one-time password, creates a therapist and sees the audit log")
    func adminFlow() async throws {
        try await withTestApp { app in
            let created = try #require(
                try await StaffAccounts(database: app.database, services: app.app.interlude).bootstrapAdminIfNeeded())
            let oneTime = try #require(created.oneTimePassword)
            #expect(try await StaffAccounts(database: app.database, services: app.app.interlude).bootstrapAdminIfNeeded() == nil)
            let browser = ConsoleBrowser(app)
            let signedIn = try await browser.signIn(Settings.defaultAdminEmail, password: oneTime)
            #expect(signedIn.location == "/console/password")
            #expect(try await browser.get("/console/users").location == "/console/password")
            let passwordPage = try await browser.get("/console/password")
            #expect(passwordPage.html.contains("one-time password"))
            let mismatch = try await browser.post(
                "/console/password",
                [("currentPassword", oneTime), ("newPassword", "admin passphrase 1"), ("repeatPassword", "something else")])
            #expect(mismatch.status == .unprocessableEntity)
            let changed = try await browser.post(
                "/console/password",
                [("currentPassword", oneTime), ("newPassword", "admin passphrase 1"), ("repeatPassword", "admin passphrase 1")])
            #expect(changed.status == .seeOther)

            _ = try await browser.get("/console/users")
            let result = try await browser.post(
                "/console/users", [("email", "berger@praxis.example"), ("name", "Dr. Anna Berger"), ("role", "therapist")])
            #expect(result.status == .created)
            let password = try #require(
                result.html.range(of: "id=\"one-time-password\">").map { String(result.html[$0.upperBound...].prefix(16)) })
            #expect(password.count == 16)
            let invalid = try await browser.post("/console/users", [("email", "not-an-email"), ("name", ""), ("role", "therapist")])
            #expect(invalid.status == .unprocessableEntity)
            #expect(invalid.html.contains("valid email address"))

            let therapist = ConsoleBrowser(app)
            #expect(try await therapist.signIn("berger@praxis.example", password: password).location == "/console/password")

            let audit = try await browser.get("/console/audit")
            #expect(audit.status == .ok)
            #expect(audit.html.contains("Created user"))
        }
    }

    @Test("a form posted without the session's CSRF token is refused and changes nothing")
    func csrf() async throws {
        try await withTestApp { app in
            _ = try await app.staff("therapist", "berger@praxis.example")
            let browser = ConsoleBrowser(app)
            _ = try await browser.signIn("berger@praxis.example")
            _ = try await browser.get("/console/pairing-codes")
            let forged = try await browser.post("/console/pairing-codes", [("count", "1")], csrf: "forged")
            #expect(forged.status == .forbidden)
            #expect(try await app.count("pairing_codes") == 0)
            let loginForgery = try await ConsoleBrowser(app).post(
                "/console/login", [("email", "berger@praxis.example"), ("password", TestContext.password)], csrf: "x")
            #expect(loginForgery.status == .forbidden)
            let real = try await browser.post("/console/pairing-codes", [("count", "2"), ("note", "first session")])
            #expect(real.status == .created)
            #expect(try await app.count("pairing_codes") == 2)
        }
    }

    @Test("a therapist hands out a code from the console, prints the sheet and sees the paired patient")
    func therapistFlow() async throws {
        try await withTestApp { app in
            _ = try await app.staff("therapist", "berger@praxis.example", name: "Dr. Anna Berger")
            let browser = ConsoleBrowser(app)
            let signedIn = try await browser.signIn("berger@praxis.example")
            #expect(signedIn.location == "/console/patients")
            let empty = try await browser.get("/console/patients")
            #expect(empty.html.contains("No patient is paired with you yet"))

            _ = try await browser.get("/console/pairing-codes")
            let created = try await browser.post("/console/pairing-codes", [("count", "1"), ("note", "A. L.")])
            #expect(created.status == .created)
            let shown = try #require(
                created.html.range(of: "data-code>").map { String(created.html[$0.upperBound...].prefix(9)) })
            let code = shown.replacingOccurrences(of: " ", with: "")
            #expect(code.count == 8)
            let sheet = try await browser.get("/console/pairing-codes/sheet")
            #expect(sheet.status == .ok)
            #expect(sheet.html.contains(shown))
            #expect(sheet.html.contains("https://interlude.test/app"))
            #expect(sheet.html.contains("Dr. Anna Berger"))

            let (patient, patientID) = try await app.patient(name: "Ada")
            let paired = try await patient.send(
                .POST, "/me/pairing", json: ["code": .string(code), "dateOfBirth": "1990-05-17", "gender": "female"])
            #expect(paired.status == .created)
            let caseload = try await browser.get("/console/patients")
            #expect(caseload.html.contains("Ada"))
            let detail = try await browser.get("/console/patients/\(patientID.uuidString)")
            #expect(detail.status == .ok)
            #expect(detail.html.contains("1990-05-17"))
            let codes = try await browser.get("/console/pairing-codes")
            #expect(codes.html.contains("data-code-status=\"redeemed\""))
            #expect(try await browser.get("/console/pairing-codes/sheet").status == .notFound)

            let profile = try await browser.post(
                "/console/profile",
                [("fullName", "Dr. Anna Berger, MSc"), ("gender", "female"), ("officeAddress", "Hauptplatz 1"),
                 ("phone", "+43 463 1"), ("emergencyNumber", "+43 142")])
            #expect(profile.status == .seeOther)
            #expect(try await patient.send(.GET, "/me/therapist").body["fullName"].string == "Dr. Anna Berger, MSc")
        }
    }

    @Test("a therapist's console never shows another therapist's patient")
    func therapistIsolation() async throws {
        try await withTestApp { app in
            let (berger, _) = try await app.staff("therapist", "berger@praxis.example")
            _ = try await app.staff("therapist", "huber@praxis.example")
            let (patient, patientID) = try await app.patient(name: "Ada")
            try await app.pair(patient, with: berger)
            let huber = ConsoleBrowser(app)
            _ = try await huber.signIn("huber@praxis.example")
            #expect(!(try await huber.get("/console/patients").html.contains("Ada")))
            #expect(try await huber.get("/console/patients/\(patientID.uuidString)").status == .notFound)
            #expect(!(try await huber.get("/console/pairing-codes").html.contains("data-code>")))
            #expect(try await huber.get("/console/users").status == .forbidden)
            #expect(try await huber.get("/console/audit").status == .forbidden)
            let studies = try await huber.get("/console/studies")
            #expect(studies.status == .ok && !studies.html.contains("/console/studies/"))
            let bergerCode = try #require(try await PairingCodeRecord.query(on: app.database).first()?.id)
            #expect(try await huber.get("/console/pairing-codes/sheet?id=\(bergerCode.uuidString)").status == .notFound)
        }
    }

    @Test("a researcher opens a study in the console and approves a join request")
    func researcherFlow() async throws {
        try await withTestApp { app in
            _ = try await app.staff("researcher", "lab@uni.example")
            let browser = ConsoleBrowser(app)
            #expect(try await browser.signIn("lab@uni.example").location == "/console/studies")
            _ = try await browser.get("/console/studies/new")
            let invalid = try await browser.post(
                "/console/studies/new",
                [("title", ""), ("description", ""), ("consentText", "x"), ("consentVersion", "1"), ("joinMode", "approval"),
                 ("joinPassword", ""), ("status", "running")])
            #expect(invalid.status == .unprocessableEntity)
            #expect(try await app.count("studies") == 0)
            let created = try await browser.post(
                "/console/studies/new",
                [("title", "Track your stress"), ("description", "Daily questions."), ("consentText", "I agree."),
                 ("consentVersion", "1"), ("joinMode", "approval"), ("joinPassword", ""), ("status", "running")])
            #expect(created.status == .seeOther)
            let studyPath = try #require(created.location)

            let (patient, _) = try await app.patient()
            let studyID = String(studyPath.split(separator: "/").last!)
            let requested = try await patient.send(.POST, "/studies/\(studyID)/enrollment", json: ["consentVersion": "1"])
            #expect(requested.body["status"].string == "requested")

            let page = try await browser.get(studyPath)
            #expect(page.html.contains("Approve"))
            let enrollmentID = try #require(requested.body["id"].string)
            let decided = try await browser.post(
                "\(studyPath)/enrollments/\(enrollmentID.uppercased())/decision", [("decision", "approve")])
            #expect(decided.status == .seeOther)
            #expect(try await patient.send(.GET, "/studies").body[0]["enrollment"]["status"].string == "active")
            #expect(try await app.count("audit_events WHERE action = 'study.enrollment.decided'") == 1)
        }
    }

    @Test("the admin filters the audit log by actor and by patient pseudonym")
    func auditFilters() async throws {
        try await withTestApp { app in
            _ = try await app.staff("admin", "admin@clinic.example")
            let (berger, bergerID) = try await app.staff("therapist", "berger@praxis.example")
            let (huber, _) = try await app.staff("therapist", "huber@praxis.example")
            let (ada, adaID) = try await app.patient("ada@example.org")
            let (bob, bobID) = try await app.patient("bob@example.org")
            try await app.pair(ada, with: berger)
            try await app.pair(bob, with: huber)
            _ = try await berger.send(.GET, "/patients/\(adaID.uuidString)")
            _ = try await huber.send(.GET, "/patients/\(bobID.uuidString)")
            let adaPseudonym = try #require(try await ada.send(.GET, "/me").body["patient"]["pseudonym"].string)
            let bobPseudonym = try #require(try await bob.send(.GET, "/me").body["patient"]["pseudonym"].string)

            let browser = ConsoleBrowser(app)
            _ = try await browser.signIn("admin@clinic.example")
            let all = try await browser.get("/console/audit")
            #expect(all.html.contains(adaPseudonym) && all.html.contains(bobPseudonym))
            let byActor = try await browser.get("/console/audit?actor=\(bergerID.uuidString)")
            #expect(byActor.html.contains(adaPseudonym) && !byActor.html.contains(bobPseudonym))
            let byPatient = try await browser.get("/console/audit?patient=\(bobPseudonym.lowercased())")
            #expect(byPatient.html.contains("<td>huber@praxis.example</td>"))
            #expect(!byPatient.html.contains("<td>berger@praxis.example</td>"))
            let unknown = try await browser.get("/console/audit?patient=P-XXXXXX")
            #expect(unknown.html.contains("No patient has this code"))
        }
    }

    @Test("the audit log pages through events that happened at the same instant without losing any")
    func auditPaging() async throws {
        try await withTestApp { app in
            let (_, adminID) = try await app.staff("admin", "admin@clinic.example")
            let admin = try #require(try await UserRecord.find(adminID, on: app.database))
            let patients = (0..<(ConsoleAdminController.auditPageSize + 20)).map { _ in UUID() }
            try await AuditLog(database: app.database, services: app.app.interlude)
                .record(actor: admin, action: .caseloadRead, patients: patients)
            let reader = AuditReader(database: app.database)
            let first = try await reader.events(actor: nil, patient: nil, before: nil, limit: ConsoleAdminController.auditPageSize)
            let second = try await reader.events(
                actor: nil, patient: nil, before: AuditReader.Cursor(first.last!), limit: ConsoleAdminController.auditPageSize)
            let seen = Set((first + second).compactMap(\.subjectID))
            #expect(seen == Set(patients))
            #expect(first.count + second.count == patients.count)
        }
    }

    @Test("the admin publishes the privacy policy with a new version; registration must accept that version")
    func siteTexts() async throws {
        try await withTestApp { app in
            _ = try await app.staff("admin", "admin@clinic.example")
            let browser = ConsoleBrowser(app)
            _ = try await browser.signIn("admin@clinic.example")
            _ = try await browser.get("/console/settings")
            let saved = try await browser.post(
                "/console/settings",
                [("privacyVersion", "2026-11"), ("privacyDe", "Datenschutz der Praxis.\n\nZweiter Absatz."),
                 ("privacyEn", "Privacy of the practice."), ("imprintDe", "Praxis Berger, Klagenfurt"),
                 ("imprintEn", "Berger practice, Klagenfurt")])
            #expect(saved.status == .seeOther)
            try await app.app.testing().test(.GET, "/app/privacy", headers: ["Accept-Language": "de"]) { response in
                #expect(response.body.string.contains("<p>Zweiter Absatz.</p>"))
                #expect(response.body.string.contains("2026-11"))
            }
            let old = try await app.api.send(.POST, "/accounts", json: AccountAPITests.registration())
            #expect(old.status == .unprocessableEntity)
            #expect(old.body.problemFields == ["privacyPolicyVersion"])
            let current = try await app.api.send(
                .POST, "/accounts", json: AccountAPITests.registration(["privacyPolicyVersion": "2026-11"]))
            #expect(current.status == .created)
        }
    }

    @Test("an unknown time zone is refused and the form offers known ones")
    func refusedPreferences() async throws {
        try await withTestApp { app in
            // setup
            _ = try await app.staff("researcher", "lab@uni.example")
            let browser = ConsoleBrowser(app)
            _ = try await browser.signIn("lab@uni.example")
            _ = try await browser.get("/console/password")
            // act
            let refused = try await browser.post("/console/preferences", [("locale", "de"), ("timeZone", "Mars/Base")])
            // verify
            #expect(refused.status == .unprocessableEntity)
            #expect(refused.html.contains("Europe/Vienna"))
            let user = try #require(try await UserRecord.query(on: app.database).filter(\.$email == "lab@uni.example").first())
            #expect(user.timeZone != "Mars/Base" && user.locale == "en")
        }
    }

    @Test("staff choose the console's language and time zone")
    func preferences() async throws {
        try await withTestApp { app in
            // setup
            _ = try await app.staff("researcher", "lab@uni.example")
            let browser = ConsoleBrowser(app)
            _ = try await browser.signIn("lab@uni.example")
            _ = try await browser.get("/console/password")
            // act
            let saved = try await browser.post("/console/preferences", [("locale", "de"), ("timeZone", "America/New_York")])
            let studies = try await browser.get("/console/studies")
            // verify
            #expect(saved.status == .seeOther)
            #expect(studies.html.contains("<html lang=\"de\">"))
            #expect(studies.html.contains("Neue Studie"))
            let user = try #require(try await UserRecord.query(on: app.database).filter(\.$email == "lab@uni.example").first())
            #expect(user.timeZone == "America/New_York")
        }
    }

    @Test("rendered pages escape what people typed")
    func escaping() async throws {
        try await withTestApp { app in
            // setup
            let (therapist, _) = try await app.staff("therapist", "berger@praxis.example")
            let (patient, _) = try await app.patient(name: "<script>alert(1)</script>")
            try await app.pair(patient, with: therapist)
            let browser = ConsoleBrowser(app)
            _ = try await browser.signIn("berger@praxis.example")
            // act
            let page = try await browser.get("/console/patients")
            // verify
            #expect(!page.html.contains("<script>alert(1)</script>"))
            #expect(page.html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"))
        }
    }
}
