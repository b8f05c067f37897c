import Foundation
import Testing
import VaporTesting

@testable import InterludeServer

@Suite("Accounts API")
struct AccountAPITests {
    typealias User = Components.Schemas.User

    static let registration: [String: JSONValue] = [
        "email": "ada@example.org", "password": "correct horse battery", "privacyPolicyVersion": "1",
        "shareWithResearch": false, "locale": "de", "timeZone": "Europe/Vienna",
    ]

    static func registration(_ changes: [String: JSONValue] = [:]) -> JSONValue {
        .object(registration.merging(changes) { _, new in new })
    }

    static let adaSignIn: JSONValue = ["email": "ada@example.org", "password": "correct horse battery"]

    /// Registers Ada and answers the token of the verification link mailed to her.
    func registerAda(_ app: TestContext, _ changes: [String: JSONValue] = [:]) async throws -> String {
        let reply = try await app.api.send(.POST, "/accounts", json: Self.registration(changes))
        try #require(reply.status == .created, "\(reply.text)")
        let email = (try reply.decoded(User.self)).email
        return try #require(app.mailer.token(for: "/app/verify", to: email))
    }

    func verify(_ app: TestContext, _ token: String) async throws -> APIClient.Reply {
        try await app.api.send(.POST, "/accounts/verification", json: ["token": .string(token)])
    }

    // MARK: Registration

    @Test("registration creates an unverified patient with a pseudonym and records the consent to the privacy policy")
    func register() async throws {
        try await withTestApp { app in
            // act
            let reply = try await app.api.send(.POST, "/accounts", json: Self.registration())

            // verify
            #expect(reply.status == .created)
            let user = try reply.decoded(User.self)
            #expect(user.email == "ada@example.org" && user.role == .patient && !user.emailVerified)
            #expect(user.patient?.shareWithResearch == false)
            #expect(user.patient?.pseudonym.hasPrefix("P-") == true)
            #expect(try await app.count("consents") == 1)
        }
    }

    @Test("registration mails a verification link in the chosen language")
    func registrationMail() async throws {
        try await withTestApp { app in
            // act
            _ = try await app.api.send(.POST, "/accounts", json: Self.registration())

            // verify
            let mail = try #require(app.mailer.sent.last)
            #expect(mail.to == "ada@example.org")
            #expect(mail.subject == "Bitte bestätigen Sie Ihre E-Mail-Adresse")
            #expect(mail.text.contains("https://interlude.test/app/verify?token="))
            #expect(mail.html.contains("https://interlude.test/app/verify?token="))
        }
    }

    @Test("a taken address, in any case and with spaces around, is refused with a conflict")
    func duplicateEmail() async throws {
        try await withTestApp { app in
            // setup
            _ = try await registerAda(app)

            // act
            let again = try await app.api.send(
                .POST, "/accounts", json: Self.registration(["email": " ADA@example.org "]))

            // verify
            #expect(again.status == .conflict)
            #expect(again.body["type"].string == "/problems/email-taken")
            #expect(try await app.count("users") == 1)
        }
    }

    @Test(
        "the availability check answers for any spelling of an address, and refuses what is not one",
        arguments: [
            ("a free address", "Ada@Example.org", false, HTTPStatus.ok, true as Bool?),
            ("a taken address", "ada%40example.org", true, .ok, false),
            ("not an address", "nonsense", false, .unprocessableEntity, nil),
        ])
    func emailAvailability(_ label: String, query: String, registered: Bool, status: HTTPStatus, available: Bool?)
        async throws
    {
        try await withTestApp { app in
            // setup
            if registered { _ = try await registerAda(app) }

            // act
            let reply = try await app.api.send(.GET, "/accounts/email-available?email=\(query)")

            // verify
            #expect(reply.status == status, "\(label)")
            if let available {
                #expect(try reply.decoded(Components.Schemas.EmailAvailability.self).available == available, "\(label)")
            }
        }
    }

    @Test(
        "invalid registrations are refused naming the field, and nothing is stored",
        arguments: [
            (["email": "not-an-email"], "email"),
            (["email": .string(String(repeating: "a", count: 250) + "@example.org")], "email"),
            (["password": "short"], "password"),
            (["password": .string(String(repeating: "x", count: 257))], "password"),
            (["password": "ada@example.org"], "password"),
            (["privacyPolicyVersion": "0"], "privacyPolicyVersion"),
            (["timeZone": "Mars/Olympus_Mons"], "timeZone"),
            (["locale": "fr"], "locale"),
            (["name": .string(String(repeating: "n", count: 101))], "name"),
            (["email": nil], "email"),
            (["shareWithResearch": "yes"], "shareWithResearch"),
        ] as [([String: JSONValue], String)])
    func invalidRegistration(changes: [String: JSONValue], field: String) async throws {
        try await withTestApp { app in
            // act
            let reply = try await app.api.send(.POST, "/accounts", json: Self.registration(changes))

            // verify
            #expect(reply.status == .unprocessableEntity, "\(reply.text)")
            #expect(reply.headers.contentType?.description.hasPrefix("application/problem+json") == true)
            #expect(reply.body.problemFields.contains(field), "\(reply.text)")
            #expect(try await app.count("users") == 0)
            #expect(app.mailer.sent.isEmpty)
        }
    }

    static let brokenBodies: [(String, String, String, HTTPStatus)] = [
        ("cut-off JSON", "/accounts", #"{"email": "a@b.cd", "#, .badRequest),
        ("an array for an object", "/sessions", "[1, 2]", .badRequest),
        (
            "six megabytes", "/accounts",
            #"{"email": "a@b.cd", "name": ""# + String(repeating: "x", count: 6 * 1024 * 1024) + #""}"#,
            .payloadTooLarge
        ),
    ]

    @Test("a body that is not the JSON asked for is a problem of its own, and stores nothing", arguments: brokenBodies)
    func brokenBody(_ label: String, path: String, raw: String, status: HTTPStatus) async throws {
        try await withTestApp { app in
            // act
            let reply = try await app.api.send(.POST, path, raw: raw)

            // verify
            #expect(reply.status == status, "\(label): \(reply.text.prefix(200))")
            #expect(reply.headers.contentType?.subType == "problem+json", "\(label)")
            if status == .badRequest { #expect(reply.body["type"].string == "/problems/malformed-request", "\(label)") }
            #expect(try await app.count("users") == 0)
        }
    }

    // MARK: Verifying the address

    @Test("an unverified account cannot sign in")
    func unverifiedSignIn() async throws {
        try await withTestApp { app in
            // setup
            _ = try await registerAda(app)

            // act
            let reply = try await app.api.send(.POST, "/sessions", json: Self.adaSignIn)

            // verify
            #expect(reply.status == .forbidden)
            #expect(reply.body["type"].string == "/problems/email-not-verified")
        }
    }

    @Test("the verification link verifies the address, and the account signs in")
    func verification() async throws {
        try await withTestApp { app in
            // setup
            let token = try await registerAda(app)

            // act
            let verified = try await verify(app, token)

            // verify
            #expect(try verified.decoded(User.self).emailVerified)
            #expect(try await app.api.send(.POST, "/sessions", json: Self.adaSignIn).status == .created)
        }
    }

    @Test("a verification link works once")
    func verificationOnce() async throws {
        try await withTestApp { app in
            // setup
            let token = try await registerAda(app)
            _ = try await verify(app, token)

            // act
            let again = try await verify(app, token)

            // verify
            #expect(again.status == .conflict)
            #expect(again.body["type"].string == "/problems/already-verified")
        }
    }

    @Test(
        "a verification link 48 hours old, one superseded by a newer one, and a made-up one are refused",
        arguments: [("expired", "expired"), ("superseded", "expired"), ("made up", "invalidValue")])
    func verificationRefused(_ kind: String, code: String) async throws {
        try await withTestApp { app in
            // setup
            var token = try await registerAda(app)
            switch kind {
            case "expired": app.clock.advance(by: 48 * 3600 + 1)
            case "superseded":
                _ = try await app.api.send(.POST, "/accounts/verification-email", json: ["email": "ada@example.org"])
            default: token = "nonsense"
            }

            // act
            let reply = try await verify(app, token)

            // verify
            #expect(reply.status == .unprocessableEntity, "\(kind)")
            #expect(reply.body.problemCodes == ["token": code], "\(kind): \(reply.text)")
            #expect(try await UserRecord.query(on: app.database).first()?.emailVerifiedAt == nil)
        }
    }

    @Test("asking again sends a new link that works, and the answer is the same for an unknown address")
    func resendVerification() async throws {
        try await withTestApp { app in
            // setup
            let first = try await registerAda(app)
            app.clock.advance(by: 48 * 3600 + 1)

            // act
            let resend = try await app.api.send(
                .POST, "/accounts/verification-email", json: ["email": "ada@example.org"])
            let nobody = try await app.api.send(
                .POST, "/accounts/verification-email", json: ["email": "nobody@example.org"])

            // verify
            #expect(resend.status == .accepted && nobody.status == .accepted)
            #expect(resend.text == nobody.text)
            #expect(app.mailer.sent.count == 2)
            let second = try #require(app.mailer.token(for: "/app/verify", to: "ada@example.org"))
            #expect(second != first)
            #expect(try await verify(app, second).status == .ok)
        }
    }

    @Test(
        "a mistyped address is corrected before verification with the password; the new address gets a working link, the old one's dies"
    )
    func correctEmail() async throws {
        try await withTestApp { app in
            // setup
            let oldLink = try await registerAda(app, ["email": "ada@exmaple.org"])

            // act
            let corrected = try await app.api.send(
                .POST, "/accounts/email-correction",
                json: ["email": "ada@exmaple.org", "password": "correct horse battery", "newEmail": "ada@example.org"])

            // verify
            #expect(corrected.status == .accepted)
            #expect(try corrected.decoded(User.self).email == "ada@example.org")
            #expect(try await verify(app, oldLink).status == .unprocessableEntity)
            let newLink = try #require(app.mailer.token(for: "/app/verify", to: "ada@example.org"))
            #expect(try await verify(app, newLink).status == .ok)
        }
    }

    @Test(
        "an address correction is refused with a wrong password, and once the address is verified",
        arguments: [("a wrong password", false, HTTPStatus.unauthorized), ("after verification", true, .conflict)])
    func correctionRefused(_ label: String, verified: Bool, status: HTTPStatus) async throws {
        try await withTestApp { app in
            // setup
            let link = try await registerAda(app)
            if verified { _ = try await verify(app, link) }

            // act
            let reply = try await app.api.send(
                .POST, "/accounts/email-correction",
                json: [
                    "email": "ada@example.org",
                    "password": .string(verified ? "correct horse battery" : "not the password"),
                    "newEmail": "ada2@example.org",
                ])

            // verify
            #expect(reply.status == status, "\(label): \(reply.text)")
            #expect(try await app.count("users WHERE email = 'ada@example.org'") == 1)
        }
    }

    // MARK: Sessions

    @Test("a sign-in gives a long random bearer token, stored only as its hash")
    func tokenHashed() async throws {
        try await withTestApp { app in
            // act
            let (patient, _) = try await app.patient()

            // verify
            let token = try #require(patient.token)
            #expect(token.count >= 43)
            let stored: [String] = try await app.sql.raw("SELECT token_hash FROM sessions").all()
                .map { try $0.decode(column: "token_hash", as: String.self) }
            #expect(stored == [SecretToken.hash(token)])
        }
    }

    @Test("a session lasts 30 days, and its token stops working after them")
    func tokenExpiry() async throws {
        try await withTestApp { app in
            // setup
            let (patient, _) = try await app.patient()

            // act
            let session = try await app.api.send(
                .POST, "/sessions", json: ["email": "patient@example.org", "password": .string(TestContext.password)])
            let expiresAt = try session.decoded(Components.Schemas.Session.self).expiresAt
            app.clock.advance(by: 30 * 24 * 3600 + 1)

            // verify
            #expect(abs(expiresAt.timeIntervalSince(Date.t0) - 30 * 24 * 3600) < 1)
            #expect(try await patient.send(.GET, "/me").status == .unauthorized)
        }
    }

    @Test("a signed-in request records activity at most every five minutes, on the session's own row")
    func activityRecorded() async throws {
        try await withTestApp { app in
            // setup
            let (patient, _) = try await app.patient()
            let signedIn = app.clock.now
            func used() async throws -> [Date] {
                try await app.sql.raw("SELECT last_used_at FROM sessions").all()
                    .map { try $0.decode(column: "last_used_at", as: Date.self) }
            }
            func active() async throws -> Date? {
                try await app.sql.raw("SELECT last_active_at FROM users WHERE email = 'patient@example.org'").first()?
                    .decode(column: "last_active_at", as: Date?.self)
            }

            // act
            app.clock.advance(by: 120)
            let early = try await patient.send(.GET, "/me")
            let usedEarly = try await used()
            app.clock.advance(by: 240)
            let late = try await patient.send(.GET, "/me")
            let usedLate = try await used()
            let activeLate = try await active()
            let again = try await patient.send(.GET, "/me")

            // verify
            #expect([early.status, late.status, again.status] == [.ok, .ok, .ok])
            #expect(usedEarly.map { $0.timeIntervalSince(signedIn) }.map { abs($0) < 0.001 } == [true])
            #expect(usedLate.map { $0.timeIntervalSince(app.clock.now) }.map { abs($0) < 0.001 } == [true])
            #expect(abs(try #require(activeLate).timeIntervalSince(app.clock.now)) < 0.001)
        }
    }

    @Test("signing out revokes the token")
    func signOut() async throws {
        try await withTestApp { app in
            // setup
            let (patient, _) = try await app.patient()
            let before = try await patient.send(.GET, "/me")

            // act
            let out = try await patient.send(.DELETE, "/sessions/current")

            // verify
            #expect(before.status == .ok)
            #expect(out.status == .noContent)
            let after = try await patient.send(.GET, "/me")
            #expect(after.status == .unauthorized)
            #expect(after.body["type"].string == "/problems/unauthenticated")
        }
    }

    static let wrongPassword: JSONValue = ["email": "patient@example.org", "password": "wrong password!"]
    static let rightPassword: JSONValue = ["email": "patient@example.org", "password": .string(TestContext.password)]

    @Test(
        "strangers guessing from many addresses never lock the owner out: past ten failures each sign-in waits, only seconds"
    )
    func strangersCannotLockOut() async throws {
        try await withTestApp { app in
            // setup: twelve wrong guesses from twelve addresses
            _ = try await app.patient()
            var refused: [HTTPStatus] = []
            for attempt in 1...12 {
                refused.append(
                    try await app.api.from("198.51.100.\(attempt)").send(.POST, "/sessions", json: Self.wrongPassword)
                        .status)
            }
            let before = app.clock.now

            // act
            let owner = try await app.api.from("203.0.113.77").send(.POST, "/sessions", json: Self.rightPassword)

            // verify: two failures past the free ten, one second
            #expect(refused.allSatisfy { $0 == .unauthorized })
            #expect(owner.status == .created)
            #expect(app.clock.now.timeIntervalSince(before) == 1)
        }
    }

    @Test("a client that guessed ten times is refused for 15 minutes, even with the right password; others are not")
    func guessingClientLimited() async throws {
        try await withTestApp { app in
            // setup
            _ = try await app.patient()
            let guesser = app.api.from("198.51.100.200")
            for _ in 1...10 { _ = try await guesser.send(.POST, "/sessions", json: Self.wrongPassword) }

            // act
            let locked = try await guesser.send(.POST, "/sessions", json: Self.rightPassword)

            // verify
            #expect(locked.status == .tooManyRequests)
            let retryAfter = try #require(locked.headers.first(name: "Retry-After").flatMap(Int.init))
            #expect(retryAfter > 0 && retryAfter <= 15 * 60)
            #expect(
                try await app.api.from("203.0.113.78").send(.POST, "/sessions", json: Self.rightPassword).status
                    == .created)
            app.clock.advance(by: 15 * 60 + 1)
            #expect(try await guesser.send(.POST, "/sessions", json: Self.rightPassword).status == .created)
        }
    }

    @Test("one client guessing many accounts is limited too, and an unknown address looks like a wrong password")
    func clientRateLimit() async throws {
        try await withTestApp { app in
            // setup
            var replies: [APIClient.Reply] = []
            for index in 1...10 {
                replies.append(
                    try await app.api.send(
                        .POST, "/sessions",
                        json: ["email": .string("nobody\(index)@example.org"), "password": "whatever it is"]))
            }

            // act
            let blocked = try await app.api.send(
                .POST, "/sessions", json: ["email": "nobody11@example.org", "password": "whatever it is"])
            let otherClient = try await app.api.from("192.0.2.1").send(
                .POST, "/sessions", json: ["email": "nobody11@example.org", "password": "whatever it is"])

            // verify
            #expect(
                replies.allSatisfy {
                    $0.status == .unauthorized && $0.body["type"].string == "/problems/invalid-credentials"
                })
            #expect(blocked.status == .tooManyRequests)
            #expect(otherClient.status == .unauthorized)
        }
    }

    // MARK: Limits on cheap requests

    @Test("guessing verification links is limited per client")
    func verificationGuessingLimited() async throws {
        try await withTestApp { app in
            // setup
            var guesses: [HTTPStatus] = []
            for attempt in 1...10 {
                guesses.append(
                    try await app.api.send(
                        .POST, "/accounts/verification", json: ["token": .string("guess-\(attempt)")]
                    ).status)
            }

            // act
            let blocked = try await app.api.send(.POST, "/accounts/verification", json: ["token": "guess-11"])

            // verify
            #expect(guesses.allSatisfy { $0 == .unprocessableEntity })
            #expect(blocked.status == .tooManyRequests)
            #expect(blocked.headers.first(name: "Retry-After") != nil)
            #expect(
                try await app.api.from("192.0.2.9").send(.POST, "/accounts/verification", json: ["token": "x"]).status
                    == .unprocessableEntity)
        }
    }

    @Test("mail on request is limited per address, whichever client asks and whatever mail it is")
    func mailPerAddressLimited() async throws {
        try await withTestApp { app in
            // setup: the registration mail and four more links from four clients
            _ = try await registerAda(app)
            for attempt in 1...4 {
                _ = try await app.api.from("198.51.100.\(attempt)").send(
                    .POST, "/accounts/verification-email", json: ["email": "ada@example.org"])
            }

            // act
            let sixth = try await app.api.from("198.51.100.99").send(
                .POST, "/password-resets", json: ["email": "ada@example.org"])
            let seventh = try await app.api.from("198.51.100.100").send(
                .POST, "/password-resets", json: ["email": "ada@example.org"])

            // verify
            #expect(sixth.status == .accepted)
            #expect(seventh.status == .tooManyRequests)
            #expect(app.mailer.sent.count == 6)
        }
    }

    @Test("address look-ups are limited per client")
    func lookUpsLimited() async throws {
        try await withTestApp { app in
            // setup
            let client = app.api.from("198.51.100.30")
            var answered: [HTTPStatus] = []
            for index in 1...30 {
                answered.append(
                    try await client.send(.GET, "/accounts/email-available?email=probe\(index)%40example.org").status)
            }

            // act
            let probing = try await client.send(.GET, "/accounts/email-available?email=probe31%40example.org")

            // verify
            #expect(answered.allSatisfy { $0 == .ok })
            #expect(probing.status == .tooManyRequests && probing.headers.first(name: "Retry-After") != nil)
            #expect(
                try await app.api.from("198.51.100.31").send(
                    .GET, "/accounts/email-available?email=probe31%40example.org"
                ).status == .ok)
        }
    }

    @Test("registrations are limited per client, and the refused one is not stored")
    func registrationsLimited() async throws {
        try await withTestApp { app in
            // setup
            let registrar = app.api.from("198.51.100.40")
            for index in 1...10 {
                _ = try await registrar.send(
                    .POST, "/accounts", json: Self.registration(["email": .string("signup\(index)@example.org")]))
            }

            // act
            let eleventh = try await registrar.send(
                .POST, "/accounts", json: Self.registration(["email": "signup11@example.org"]))

            // verify
            #expect(try await app.count("users") == 10)
            #expect(eleventh.status == .tooManyRequests)
            #expect(try await app.count("users WHERE email = 'signup11@example.org'") == 0)
        }
    }

    @Test("address corrections send mail, so they are limited per client like other mail on request")
    func correctionsLimited() async throws {
        try await withTestApp { app in
            // setup: five corrections in a row
            _ = try await registerAda(app, ["email": "signup1@example.org"])
            let corrector = app.api.from("198.51.100.50")
            var accepted: [HTTPStatus] = []
            for index in 1...5 {
                accepted.append(
                    try await corrector.send(
                        .POST, "/accounts/email-correction",
                        json: [
                            "email": .string(index == 1 ? "signup1@example.org" : "fixed\(index - 1)@example.org"),
                            "password": "correct horse battery", "newEmail": .string("fixed\(index)@example.org"),
                        ]
                    ).status)
            }

            // act
            let sixth = try await corrector.send(
                .POST, "/accounts/email-correction",
                json: [
                    "email": "fixed5@example.org", "password": "correct horse battery",
                    "newEmail": "fixed6@example.org",
                ])

            // verify
            #expect(accepted.allSatisfy { $0 == .accepted })
            #expect(sixth.status == .tooManyRequests)
            #expect(try await app.count("users WHERE email = 'fixed5@example.org'") == 1)
        }
    }

    @Test("a four-character study join password does not fall to guessing: the sixth try waits 15 minutes")
    func joinPasswordGuessingLimited() async throws {
        try await withTestApp { app in
            // setup: five wrong guesses
            let (researcher, _) = try await app.staff("researcher", "lab@uni.example")
            let study = try await StudyAPITests().createStudy(
                researcher, StudyAPITests.study("password", password: "k7Q2"))
            let (patient, _) = try await app.patient("joiner@example.org")
            var guesses: [HTTPStatus] = []
            for guess in ["aaaa", "aaab", "aaac", "aaad", "aaae"] {
                guesses.append(
                    try await patient.send(
                        .POST, "/studies/\(study)/enrollment",
                        json: ["consentVersion": "2026-1", "password": .string(guess)]
                    ).status)
            }
            let right: JSONValue = ["consentVersion": "2026-1", "password": "k7Q2"]

            // act
            let sixth = try await patient.send(.POST, "/studies/\(study)/enrollment", json: right)
            app.clock.advance(by: 15 * 60 + 1)
            let later = try await patient.send(.POST, "/studies/\(study)/enrollment", json: right)

            // verify
            #expect(guesses.allSatisfy { $0 == .unprocessableEntity })
            #expect(sixth.status == .tooManyRequests)
            #expect(later.status == .created, "\(later.text)")
        }
    }

    // MARK: Passwords

    func resetLink(_ app: TestContext) async throws -> String {
        _ = try await app.api.send(.POST, "/password-resets", json: ["email": "patient@example.org"])
        return try #require(app.mailer.token(for: "/app/reset-password", to: "patient@example.org"))
    }

    func confirmReset(_ app: TestContext, _ token: String, _ password: String) async throws -> APIClient.Reply {
        try await app.api.send(
            .POST, "/password-resets/confirmation", json: ["token": .string(token), "newPassword": .string(password)])
    }

    @Test("asking for a password reset answers the same for any address, and mails only a known one")
    func resetSameAnswer() async throws {
        try await withTestApp { app in
            // setup
            _ = try await app.patient()
            let earlier = app.mailer.sent.count

            // act
            let unknown = try await app.api.send(.POST, "/password-resets", json: ["email": "nobody@example.org"])
            let known = try await app.api.send(.POST, "/password-resets", json: ["email": "patient@example.org"])

            // verify
            #expect(unknown.status == .accepted && known.status == .accepted)
            #expect(known.text == unknown.text)
            #expect(app.mailer.sent.dropFirst(earlier).map(\.to) == ["patient@example.org"])
        }
    }

    @Test("a reset link sets a new password and ends every session")
    func passwordReset() async throws {
        try await withTestApp { app in
            // setup
            let (patient, _) = try await app.patient()
            let token = try await resetLink(app)

            // act
            let reset = try await confirmReset(app, token, "a brand new passphrase")

            // verify
            #expect(reset.status == .noContent)
            #expect(try await patient.send(.GET, "/me").status == .unauthorized)
            #expect(try await app.signIn("patient@example.org", password: "a brand new passphrase").token != nil)
        }
    }

    @Test(
        "a reset is refused for a short password, a used link, a link an hour old and an older link once a newer one was used",
        arguments: [
            ("short password", "newPassword", "tooShort"), ("used", "token", "alreadyUsed"),
            ("expired", "token", "expired"), ("older", "token", nil as String?),
        ])
    func resetRefused(_ kind: String, field: String, code: String?) async throws {
        try await withTestApp { app in
            // setup
            _ = try await app.patient()
            let token = try await resetLink(app)
            var password = "an attacker's passphrase"
            switch kind {
            case "short password": password = "short"
            case "used": _ = try await confirmReset(app, token, "a brand new passphrase")
            case "expired": app.clock.advance(by: 3601)
            default:
                let newer = try await resetLink(app)
                _ = try await confirmReset(app, newer, "a brand new passphrase")
            }

            // act
            let reply = try await confirmReset(app, token, password)

            // verify
            #expect(reply.status == .unprocessableEntity, "\(kind)")
            #expect(reply.body.problemFields == [field], "\(kind): \(reply.text)")
            if let code { #expect(reply.body.problemCodes[field] == code, "\(kind): \(reply.text)") }
            let stillWorks =
                kind == "short password" || kind == "expired" ? TestContext.password : "a brand new passphrase"
            #expect(try await app.signIn("patient@example.org", password: stillWorks).token != nil)
        }
    }

    @Test("changing the password with the current one keeps this device signed in and signs out the others")
    func changePassword() async throws {
        try await withTestApp { app in
            // setup
            let (phone, _) = try await app.patient()
            let tablet = try await app.signIn("patient@example.org")

            // act
            let changed = try await phone.send(
                .PUT, "/me/password",
                json: ["currentPassword": .string(TestContext.password), "newPassword": "another passphrase"])

            // verify
            #expect(changed.status == .noContent)
            #expect(try await phone.send(.GET, "/me").status == .ok)
            #expect(try await tablet.send(.GET, "/me").status == .unauthorized)
        }
    }

    @Test(
        "a password change is refused without the current password and without a session",
        arguments: [
            ("a wrong current password", true, HTTPStatus.unprocessableEntity), ("no session", false, .unauthorized),
        ])
    func changePasswordRefused(_ label: String, signedIn: Bool, status: HTTPStatus) async throws {
        try await withTestApp { app in
            // setup
            let (phone, _) = try await app.patient()
            let caller = signedIn ? phone : app.api

            // act
            let reply = try await caller.send(
                .PUT, "/me/password", json: ["currentPassword": "not my password", "newPassword": "another passphrase"])

            // verify
            #expect(reply.status == status, "\(label)")
            if signedIn { #expect(reply.body.problemFields == ["currentPassword"]) }
            #expect(try await app.signIn("patient@example.org").token != nil)
        }
    }

    // MARK: The profile

    @Test("the profile is edited; withdrawing research sharing revokes that consent")
    func profile() async throws {
        try await withTestApp { app in
            // setup
            let (patient, _) = try await app.patient(shareWithResearch: true)

            // act
            let updated = try await patient.send(
                .PATCH, "/me",
                json: ["name": "Ada", "locale": "de", "timeZone": "America/New_York", "shareWithResearch": false])

            // verify
            let user = try updated.decoded(User.self)
            #expect(user.name == "Ada" && user.locale == .de && user.timeZone == "America/New_York")
            #expect(user.patient?.shareWithResearch == false)
            #expect(try await app.count("consents WHERE document = 'researchSharing' AND revoked_at IS NOT NULL") == 1)
        }
    }

    @Test("a profile change with one bad value changes nothing")
    func profileRefused() async throws {
        try await withTestApp { app in
            // setup
            let (patient, _) = try await app.patient()
            _ = try await patient.send(.PATCH, "/me", json: ["name": "Ada"])

            // act
            let refused = try await patient.send(.PATCH, "/me", json: ["name": "Bea", "timeZone": "Nowhere/Land"])

            // verify
            #expect(refused.status == .unprocessableEntity)
            #expect(refused.body.problemFields == ["timeZone"])
            let unchanged = try await patient.send(.GET, "/me").decoded(User.self)
            #expect(unchanged.name == "Ada" && unchanged.timeZone == "Europe/Vienna")
        }
    }

    @Test("problems and site texts follow Accept-Language")
    func language() async throws {
        try await withTestApp { app in
            // setup
            var german = app.api
            german.language = "de-AT,de;q=0.9,en;q=0.5"

            // act
            let reply = try await german.send(.GET, "/me")
            let policy = try await german.send(.GET, "/privacy-policy").decoded(Components.Schemas.SiteText.self)

            // verify
            #expect(reply.body["detail"].string == "Bitte melden Sie sich an.")
            #expect(policy.locale == .de && policy.version == "1")
        }
    }

    @Test(
        "giving the password again is throttled per account: after five wrong ones the next waits, even the right one",
        arguments: ["change the password", "delete the account"])
    func reverificationThrottled(_ change: String) async throws {
        try await withTestApp { app in
            // setup
            let (ada, _) = try await app.patient("ada@example.org")
            func attempt(_ password: String) async throws -> APIClient.Reply {
                change == "delete the account"
                    ? try await ada.send(.DELETE, "/me", json: ["password": .string(password)])
                    : try await ada.send(
                        .PUT, "/me/password",
                        json: ["currentPassword": .string(password), "newPassword": "another passphrase"])
            }

            // act
            var wrong: [UInt] = []
            for index in 0..<5 { wrong.append(try await attempt("guess number \(index)").status.code) }
            let held = try await attempt(TestContext.password)
            app.clock.advance(by: 15 * 60 + 1)
            let later = try await attempt(TestContext.password)

            // verify
            #expect(wrong == Array(repeating: 422, count: 5))
            #expect(held.status == .tooManyRequests && held.headers.first(name: "Retry-After") != nil, "\(held.text)")
            #expect(later.status == .noContent, "\(later.text)")
        }
    }
}
