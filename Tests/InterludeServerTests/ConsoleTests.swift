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

    // MARK: The first administrator

    /// Creates the first administrator and signs them in with the one-time password; answers the browser and password.
    func firstAdmin(_ app: TestContext) async throws -> (
        browser: ConsoleBrowser, oneTime: String, signedIn: ConsoleBrowser.Page
    ) {
        let created = try #require(
            try await StaffAccounts(database: app.database, services: app.app.interlude).bootstrapAdminIfNeeded())
        let oneTime = try #require(created.oneTimePassword)
        let browser = ConsoleBrowser(app)
        let signedIn = try await browser.signIn(Settings.defaultAdminEmail, password: oneTime)
        return (browser, oneTime, signedIn)
    }

    @Test("the first administrator is created once, with a one-time password")
    func bootstrapOnce() async throws {
        try await withTestApp { app in
            // act
            let first = try await StaffAccounts(database: app.database, services: app.app.interlude)
                .bootstrapAdminIfNeeded()
            let second = try await StaffAccounts(database: app.database, services: app.app.interlude)
                .bootstrapAdminIfNeeded()

            // verify
            #expect(first?.oneTimePassword?.isEmpty == false)
            #expect(second == nil)
            #expect(try await app.count("users WHERE role = 'admin'") == 1)
        }
    }

    @Test("with a one-time password every console page leads to changing it first")
    func oneTimePasswordFirst() async throws {
        try await withTestApp { app in
            // setup / act
            let (browser, _, signedIn) = try await firstAdmin(app)
            let users = try await browser.get("/console/users")
            let passwordPage = try await browser.get("/console/password")

            // verify
            #expect(signedIn.location == "/console/password")
            #expect(users.location == "/console/password")
            #expect(passwordPage.html.contains("one-time password"))
        }
    }

    @Test("a new password repeated differently is refused; repeated the same, it replaces the one-time password")
    func changeOneTimePassword() async throws {
        try await withTestApp { app in
            // setup
            let (browser, oneTime, _) = try await firstAdmin(app)
            _ = try await browser.get("/console/password")

            // act
            let mismatch = try await browser.post(
                "/console/password",
                [
                    ("currentPassword", oneTime), ("newPassword", "admin passphrase 1"),
                    ("repeatPassword", "something else"),
                ])
            let changed = try await browser.post(
                "/console/password",
                [
                    ("currentPassword", oneTime), ("newPassword", "admin passphrase 1"),
                    ("repeatPassword", "admin passphrase 1"),
                ])

            // verify
            #expect(mismatch.status == .unprocessableEntity)
            #expect(changed.status == .seeOther)
            #expect(try await browser.get("/console/users").status == .ok)
        }
    }

    @Test("the administrator creates a therapist, who must change the one-time password shown once; it is audited")
    func createTherapist() async throws {
        try await withTestApp { app in
            // setup
            _ = try await app.staff("admin", "admin@clinic.example")
            let browser = ConsoleBrowser(app)
            _ = try await browser.signIn("admin@clinic.example")
            _ = try await browser.get("/console/users")

            // act
            let result = try await browser.post(
                "/console/users",
                [("email", "berger@praxis.example"), ("name", "Dr. Anna Berger"), ("role", "therapist")])

            // verify
            #expect(result.status == .created)
            let password = try #require(
                result.html.range(of: "id=\"one-time-password\">").map {
                    String(result.html[$0.upperBound...].prefix(16))
                })
            #expect(password.count == 16)
            #expect(
                try await ConsoleBrowser(app).signIn("berger@praxis.example", password: password).location
                    == "/console/password")
            #expect(try await browser.get("/console/audit").html.contains("Created user"))
        }
    }

    @Test("a staff account with an invalid address is refused with the message, and nothing is stored")
    func createTherapistRefused() async throws {
        try await withTestApp { app in
            // setup
            _ = try await app.staff("admin", "admin@clinic.example")
            let browser = ConsoleBrowser(app)
            _ = try await browser.signIn("admin@clinic.example")
            _ = try await browser.get("/console/users")

            // act
            let invalid = try await browser.post(
                "/console/users", [("email", "not-an-email"), ("name", ""), ("role", "therapist")])

            // verify
            #expect(invalid.status == .unprocessableEntity)
            #expect(invalid.html.contains("valid email address"))
            #expect(try await app.count("users") == 1)
        }
    }

    // MARK: Forms

    @Test(
        "a form posted without the session's CSRF token is refused and changes nothing",
        arguments: [("a signed-in form", true), ("the sign-in form", false)])
    func csrfRefused(_ label: String, signedIn: Bool) async throws {
        try await withTestApp { app in
            // setup
            _ = try await app.staff("therapist", "berger@praxis.example")
            let browser = ConsoleBrowser(app)
            if signedIn {
                _ = try await browser.signIn("berger@praxis.example")
                _ = try await browser.get("/console/pairing-codes")
            }
            let sessions = try await app.count("sessions")

            // act
            let forged =
                signedIn
                ? try await browser.post("/console/pairing-codes", [("count", "1")], csrf: "forged")
                : try await browser.post(
                    "/console/login", [("email", "berger@praxis.example"), ("password", TestContext.password)],
                    csrf: "x")

            // verify
            #expect(forged.status == .forbidden, "\(label)")
            #expect(try await app.count("pairing_codes") == 0)
            #expect(try await app.count("sessions") == sessions)
        }
    }

    @Test("a form posted with the session's CSRF token is accepted")
    func csrfAccepted() async throws {
        try await withTestApp { app in
            // setup
            _ = try await app.staff("therapist", "berger@praxis.example")
            let browser = ConsoleBrowser(app)
            _ = try await browser.signIn("berger@praxis.example")
            _ = try await browser.get("/console/pairing-codes")

            // act
            let real = try await browser.post("/console/pairing-codes", [("count", "2"), ("note", "first session")])

            // verify
            #expect(real.status == .created)
            #expect(try await app.count("pairing_codes") == 2)
        }
    }

    @Test("a console session in use stays signed in past its twelve hours; one left alone for twelve hours ends")
    func consoleSessionSlides() async throws {
        try await withTestApp { app in
            // setup
            _ = try await app.staff("therapist", "berger@praxis.example")
            let browser = ConsoleBrowser(app)
            _ = try await browser.signIn("berger@praxis.example")

            // act
            app.clock.advance(by: 11 * 3600)
            let afterEleven = try await browser.get("/console/pairing-codes")
            app.clock.advance(by: 11 * 3600)
            let afterTwentyTwo = try await browser.get("/console/pairing-codes")
            app.clock.advance(by: 12 * 3600 + 1)
            let leftAlone = try await browser.get("/console/pairing-codes")

            // verify
            #expect(afterEleven.status == .ok)
            #expect(afterTwentyTwo.status == .ok, "the visit at eleven hours moved the end on")
            #expect(leftAlone.status == .seeOther)
            #expect(leftAlone.location?.hasPrefix("/console/login") == true)
        }
    }

    // MARK: A therapist's console

    /// A therapist signed in to the console with one pairing code made; answers the browser and the code as shown.
    func therapistWithCode(_ app: TestContext) async throws -> (browser: ConsoleBrowser, shown: String) {
        _ = try await app.staff("therapist", "berger@praxis.example", name: "Dr. Anna Berger")
        let browser = ConsoleBrowser(app)
        _ = try await browser.signIn("berger@praxis.example")
        _ = try await browser.get("/console/pairing-codes")
        let created = try await browser.post("/console/pairing-codes", [("count", "1"), ("note", "A. L.")])
        try #require(created.status == .created)
        let shown = try #require(
            created.html.range(of: "data-code>").map { String(created.html[$0.upperBound...].prefix(9)) })
        return (browser, shown)
    }

    /// Ada pairs with the code shown; answers her client and id.
    func adaPairs(_ app: TestContext, _ shown: String) async throws -> (patient: APIClient, id: UUID) {
        let (patient, patientID) = try await app.patient(name: "Ada")
        let paired = try await patient.send(
            .POST, "/me/pairing",
            json: [
                "code": .string(shown.replacingOccurrences(of: " ", with: "")), "dateOfBirth": "1990-05-17",
                "gender": "female",
            ])
        try #require(paired.status == .created, "\(paired.text)")
        return (patient, patientID)
    }

    @Test("a therapist lands on an empty caseload that says so")
    func emptyCaseload() async throws {
        try await withTestApp { app in
            // setup
            _ = try await app.staff("therapist", "berger@praxis.example")
            let browser = ConsoleBrowser(app)

            // act
            let signedIn = try await browser.signIn("berger@praxis.example")
            let caseload = try await browser.get("/console/patients")

            // verify
            #expect(signedIn.location == "/console/patients")
            #expect(caseload.html.contains("No patient is paired with you yet"))
        }
    }

    @Test(
        "a pairing code is shown in two groups of four and printed on a sheet with the app's address and the therapist's name"
    )
    func pairingSheet() async throws {
        try await withTestApp { app in
            // setup
            let (browser, shown) = try await therapistWithCode(app)

            // act
            let sheet = try await browser.get("/console/pairing-codes/sheet")

            // verify
            #expect(shown.replacingOccurrences(of: " ", with: "").count == 8)
            #expect(sheet.status == .ok)
            #expect(sheet.html.contains(shown))
            #expect(sheet.html.contains("https://interlude.test/app"))
            #expect(sheet.html.contains("Dr. Anna Berger"))
        }
    }

    @Test("once a patient pairs, they are in the caseload with their details, the code is redeemed and its sheet gone")
    func patientPaired() async throws {
        try await withTestApp { app in
            // setup
            let (browser, shown) = try await therapistWithCode(app)

            // act
            let (_, patientID) = try await adaPairs(app, shown)

            // verify
            #expect(try await browser.get("/console/patients").html.contains("Ada"))
            let detail = try await browser.get("/console/patients/\(patientID.uuidString)")
            #expect(detail.status == .ok && detail.html.contains("1990-05-17"))
            #expect(try await browser.get("/console/pairing-codes").html.contains("data-code-status=\"redeemed\""))
            #expect(try await browser.get("/console/pairing-codes/sheet").status == .notFound)
        }
    }

    @Test("the therapist's profile, edited in the console, is what paired patients see")
    func therapistProfile() async throws {
        try await withTestApp { app in
            // setup
            let (browser, shown) = try await therapistWithCode(app)
            let (patient, _) = try await adaPairs(app, shown)

            // act
            let profile = try await browser.post(
                "/console/profile",
                [
                    ("fullName", "Dr. Anna Berger, MSc"), ("gender", "female"), ("officeAddress", "Hauptplatz 1"),
                    ("phone", "+43 463 1"), ("emergencyNumber", "+43 142"),
                ])

            // verify
            #expect(profile.status == .seeOther)
            let seen = try await patient.send(.GET, "/me/therapist").decoded(Components.Schemas.TherapistProfile.self)
            #expect(seen.fullName == "Dr. Anna Berger, MSc" && seen.emergencyNumber == "+43 142")
        }
    }

    enum OtherTherapistLooks: String, CaseIterable, Sendable {
        case caseload, patientPage, pairingCodes, codeSheet, users, audit, studies
    }

    @Test(
        "a therapist's console never shows another therapist's patient, codes or studies",
        arguments: OtherTherapistLooks.allCases)
    func therapistIsolation(_ look: OtherTherapistLooks) async throws {
        try await withTestApp { app in
            // setup: Ada is Berger's patient; Huber signs in
            let (berger, _) = try await app.staff("therapist", "berger@praxis.example")
            _ = try await app.staff("therapist", "huber@praxis.example")
            let (patient, patientID) = try await app.patient(name: "Ada")
            try await app.pair(patient, with: berger)
            let bergerCode = try #require(try await PairingCodeRecord.query(on: app.database).first()?.id)
            let huber = ConsoleBrowser(app)
            _ = try await huber.signIn("huber@praxis.example")

            // act
            let page: ConsoleBrowser.Page
            switch look {
            case .caseload: page = try await huber.get("/console/patients")
            case .patientPage: page = try await huber.get("/console/patients/\(patientID.uuidString)")
            case .pairingCodes: page = try await huber.get("/console/pairing-codes")
            case .codeSheet: page = try await huber.get("/console/pairing-codes/sheet?id=\(bergerCode.uuidString)")
            case .users: page = try await huber.get("/console/users")
            case .audit: page = try await huber.get("/console/audit")
            case .studies: page = try await huber.get("/console/studies")
            }

            // verify
            switch look {
            case .caseload, .pairingCodes, .studies: #expect(page.status == .ok)
            case .patientPage, .codeSheet: #expect(page.status == .notFound)
            case .users, .audit: #expect(page.status == .forbidden)
            }
            #expect(!page.html.contains("Ada"))
            #expect(!page.html.contains("data-code>"))
            #expect(!page.html.contains("/console/studies/"))
        }
    }

    // MARK: A researcher's console

    static let studyForm: [(String, String)] = [
        ("title", "Track your stress"), ("description", "Daily questions."), ("consentText", "I agree."),
        ("consentVersion", "1"), ("joinMode", "approval"), ("joinPassword", ""), ("status", "running"),
    ]

    /// A researcher signed in at the new-study form.
    func researcherAtNewStudy(_ app: TestContext) async throws -> ConsoleBrowser {
        _ = try await app.staff("researcher", "lab@uni.example")
        let browser = ConsoleBrowser(app)
        _ = try await browser.signIn("lab@uni.example")
        _ = try await browser.get("/console/studies/new")
        return browser
    }

    @Test("a study without a title is refused, and nothing is stored")
    func studyRefused() async throws {
        try await withTestApp { app in
            // setup
            let browser = try await researcherAtNewStudy(app)

            // act
            let invalid = try await browser.post(
                "/console/studies/new", Self.studyForm.map { $0.0 == "title" ? ("title", "") : $0 })

            // verify
            #expect(invalid.status == .unprocessableEntity)
            #expect(try await app.count("studies") == 0)
        }
    }

    @Test(
        "the study form takes title, description and consent in German too; a German text too long is named at its field and nothing is stored"
    )
    func studyInGerman() async throws {
        try await withTestApp { app in
            // setup
            let browser = try await researcherAtNewStudy(app)
            let german =
                Self.studyForm + [
                    ("titleDe", "Stress im Blick"), ("descriptionDe", "Tägliche Fragen."),
                    ("consentTextDe", "Ich stimme zu."),
                ]

            // act
            let tooLong = try await browser.post(
                "/console/studies/new",
                german.map { $0.0 == "titleDe" ? ("titleDe", String(repeating: "t", count: 201)) : $0 })
            let created = try await browser.post("/console/studies/new", german)
            let edit = try await browser.get("\(try #require(created.location))/edit")

            // verify
            #expect(tooLong.status == .unprocessableEntity)
            #expect(tooLong.html.contains("id=\"titleDe-error\""))
            #expect(created.status == .seeOther)
            let study = try #require(
                try await StudyRecord.query(on: app.database).filter(\.$joinMode == .approval).first())
            #expect(study.titles.values == [.en: "Track your stress", .de: "Stress im Blick"])
            #expect(study.descriptions.text(.de) == "Tägliche Fragen.")
            let consent = try #require(
                try await ConsentVersionRecord.query(on: app.database).filter(\.$study.$id == study.id!).first())
            #expect(consent.localizedTexts.values == [.en: "I agree.", .de: "Ich stimme zu."])
            #expect(edit.html.contains("value=\"Stress im Blick\""))
        }
    }

    @Test("a researcher creates a study and approves a join request on its page; the decision is audited")
    func approveJoinRequest() async throws {
        try await withTestApp { app in
            // setup: a study, and a patient asking to join
            let browser = try await researcherAtNewStudy(app)
            let created = try await browser.post("/console/studies/new", Self.studyForm)
            let studyPath = try #require(created.location)
            let (patient, _) = try await app.patient()
            let studyID = String(studyPath.split(separator: "/").last!)
            let requested = try await patient.send(
                .POST, "/studies/\(studyID)/enrollment", json: ["consentVersion": "1"]
            )
            .decoded(Components.Schemas.Enrollment.self)
            let page = try await browser.get(studyPath)

            // act
            let decided = try await browser.post(
                "\(studyPath)/enrollments/\(requested.id.uppercased())/decision", [("decision", "approve")])

            // verify
            #expect(created.status == .seeOther)
            #expect(requested.status == .requested)
            #expect(page.html.contains("Approve"))
            #expect(decided.status == .seeOther)
            #expect(try await patient.send(.GET, "/studies").body[0]["enrollment"]["status"].string == "active")
            #expect(try await app.count("audit_events WHERE action = 'study.enrollment.decided'") == 1)
        }
    }

    // MARK: The audit log

    /// Ada (Berger's) and Bob (Huber's), each read by their therapist; an admin signed in. Answers pseudonyms and Berger's id.
    func twoReads(_ app: TestContext) async throws -> (
        browser: ConsoleBrowser, ada: String, bob: String, bergerID: UUID
    ) {
        _ = try await app.staff("admin", "admin@clinic.example")
        let (berger, bergerID) = try await app.staff("therapist", "berger@praxis.example")
        let (huber, _) = try await app.staff("therapist", "huber@praxis.example")
        let (ada, adaID) = try await app.patient("ada@example.org")
        let (bob, bobID) = try await app.patient("bob@example.org")
        try await app.pair(ada, with: berger)
        try await app.pair(bob, with: huber)
        _ = try await berger.send(.GET, "/patients/\(adaID.uuidString)")
        _ = try await huber.send(.GET, "/patients/\(bobID.uuidString)")
        let adaPseudonym = try #require(
            try await ada.send(.GET, "/me").decoded(Components.Schemas.User.self).patient?.pseudonym)
        let bobPseudonym = try #require(
            try await bob.send(.GET, "/me").decoded(Components.Schemas.User.self).patient?.pseudonym)
        let browser = ConsoleBrowser(app)
        _ = try await browser.signIn("admin@clinic.example")
        return (browser, adaPseudonym, bobPseudonym, bergerID)
    }

    @Test("the audit log shows every read, and filtered by actor only that actor's")
    func auditByActor() async throws {
        try await withTestApp { app in
            // setup
            let (browser, ada, bob, bergerID) = try await twoReads(app)

            // act
            let all = try await browser.get("/console/audit")
            let byActor = try await browser.get("/console/audit?actor=\(bergerID.uuidString)")

            // verify
            #expect(all.html.contains(ada) && all.html.contains(bob))
            #expect(byActor.html.contains(ada) && !byActor.html.contains(bob))
        }
    }

    @Test("the audit log filtered by a patient's pseudonym, in any case, shows only who read that patient")
    func auditByPatient() async throws {
        try await withTestApp { app in
            // setup
            let (browser, ada, bob, _) = try await twoReads(app)
            let nobody = "P-2345ZZ"  // well formed, and neither Ada's nor Bob's
            try #require(![ada, bob].contains(nobody))

            // act
            let byPatient = try await browser.get("/console/audit?patient=\(bob.lowercased())")
            let unknown = try await browser.get("/console/audit?patient=\(nobody)")

            // verify
            #expect(byPatient.html.contains("<td>huber@praxis.example</td>"))
            #expect(!byPatient.html.contains("<td>berger@praxis.example</td>"))
            #expect(unknown.html.contains("No patient has this code"))
        }
    }

    @Test("the audit log pages through events that happened at the same instant without losing any")
    func auditPaging() async throws {
        try await withTestApp { app in
            // setup: a page and twenty more events at one instant
            let (_, adminID) = try await app.staff("admin", "admin@clinic.example")
            let admin = try #require(try await UserRecord.find(adminID, on: app.database))
            let patients = (0..<(ConsoleAdminController.auditPageSize + 20)).map { _ in UUID() }
            try await AuditLog(database: app.database, services: app.app.interlude).record(
                actor: admin, action: .caseloadRead, patients: patients)
            let reader = AuditReader(database: app.database)

            // act
            let first = try await reader.events(
                actor: nil, patient: nil, before: nil, limit: ConsoleAdminController.auditPageSize)
            let second = try await reader.events(
                actor: nil, patient: nil, before: AuditReader.Cursor(first.last!),
                limit: ConsoleAdminController.auditPageSize)

            // verify
            #expect(Set((first + second).compactMap(\.subjectID)) == Set(patients))
            #expect(first.count + second.count == patients.count)
        }
    }

    // MARK: Site texts

    /// The admin publishes privacy policy version 2026-11.
    func publishPolicy(_ app: TestContext) async throws -> ConsoleBrowser.Page {
        _ = try await app.staff("admin", "admin@clinic.example")
        let browser = ConsoleBrowser(app)
        _ = try await browser.signIn("admin@clinic.example")
        _ = try await browser.get("/console/settings")
        return try await browser.post(
            "/console/settings",
            [
                ("privacyVersion", "2026-11"), ("privacyDe", "Datenschutz der Praxis.\n\nZweiter Absatz."),
                ("privacyEn", "Privacy of the practice."), ("imprintDe", "Praxis Berger, Klagenfurt"),
                ("imprintEn", "Berger practice, Klagenfurt"),
            ])
    }

    @Test("the privacy policy the admin publishes is what the app shows, in paragraphs, with its version")
    func publishedPolicy() async throws {
        try await withTestApp { app in
            // act
            let saved = try await publishPolicy(app)

            // verify
            #expect(saved.status == .seeOther)
            try await app.app.testing().test(.GET, "/app/privacy", headers: ["Accept-Language": "de"]) { response in
                #expect(response.body.string.contains("<p>Zweiter Absatz.</p>"))
                #expect(response.body.string.contains("2026-11"))
            }
        }
    }

    @Test(
        "after a new privacy policy, registration must accept that version",
        arguments: [("the old version", "1", HTTPStatus.unprocessableEntity), ("the new version", "2026-11", .created)])
    func registrationNeedsNewPolicy(_ label: String, version: String, status: HTTPStatus) async throws {
        try await withTestApp { app in
            // setup
            _ = try await publishPolicy(app)

            // act
            let reply = try await app.api.send(
                .POST, "/accounts", json: AccountAPITests.registration(["privacyPolicyVersion": .string(version)]))

            // verify
            #expect(reply.status == status, "\(label): \(reply.text)")
            if status != .created { #expect(reply.body.problemFields == ["privacyPolicyVersion"]) }
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
            let user = try #require(
                try await UserRecord.query(on: app.database).filter(\.$email == "lab@uni.example").first())
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
            let saved = try await browser.post(
                "/console/preferences", [("locale", "de"), ("timeZone", "America/New_York")])
            let studies = try await browser.get("/console/studies")
            // verify
            #expect(saved.status == .seeOther)
            #expect(studies.html.contains("<html lang=\"de\">"))
            #expect(studies.html.contains("Neue Studie"))
            let user = try #require(
                try await UserRecord.query(on: app.database).filter(\.$email == "lab@uni.example").first())
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
