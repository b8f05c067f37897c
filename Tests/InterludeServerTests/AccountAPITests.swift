import Foundation
import Testing
import VaporTesting

@testable import InterludeServer

@Suite("Accounts API")
struct AccountAPITests {
    static let registration: [String: JSONValue] = [
        "email": "ada@example.org", "password": "correct horse battery", "privacyPolicyVersion": "1",
        "shareWithResearch": false, "locale": "de", "timeZone": "Europe/Vienna",
    ]

    static func registration(_ changes: [String: JSONValue] = [:]) -> JSONValue {
        .object(registration.merging(changes) { _, new in new })
    }

    @Test("registration creates an unverified patient and emails a link in the chosen language")
    func register() async throws {
        try await withTestApp { app in
            // act
            let reply = try await app.api.send(.POST, "/accounts", json: Self.registration())
            // verify
            #expect(reply.status == .created)
            #expect(reply.body["email"].string == "ada@example.org")
            #expect(reply.body["emailVerified"].bool == false)
            #expect(reply.body["role"].string == "patient")
            #expect(reply.body["patient"]["shareWithResearch"].bool == false)
            #expect(reply.body["patient"]["pseudonym"].string?.hasPrefix("P-") == true)
            let mail = try #require(app.mailer.sent.last)
            #expect(mail.to == "ada@example.org")
            #expect(mail.subject == "Bitte bestätigen Sie Ihre E-Mail-Adresse")
            #expect(mail.text.contains("https://interlude.test/app/verify?token="))
            #expect(mail.html.contains("https://interlude.test/app/verify?token="))
            #expect(try await app.count("consents") == 1)
        }
    }

    @Test("a taken address is refused with 409 and the availability check says so")
    func duplicateEmail() async throws {
        try await withTestApp { app in
            let first = try await app.api.send(.GET, "/accounts/email-available?email=Ada@Example.org")
            #expect(first.body["available"].bool == true)
            _ = try await app.api.send(.POST, "/accounts", json: Self.registration())
            let again = try await app.api.send(
                .POST, "/accounts", json: Self.registration(["email": " ADA@example.org "]))
            #expect(again.status == .conflict)
            #expect(again.body["type"].string == "/problems/email-taken")
            let check = try await app.api.send(.GET, "/accounts/email-available?email=ada%40example.org")
            #expect(check.body["available"].bool == false)
            let invalid = try await app.api.send(.GET, "/accounts/email-available?email=nonsense")
            #expect(invalid.status == .unprocessableEntity)
            #expect(try await app.count("users") == 1)
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
            let reply = try await app.api.send(.POST, "/accounts", json: Self.registration(changes))
            #expect(reply.status == .unprocessableEntity, "\(reply.text)")
            #expect(reply.headers.contentType?.description.hasPrefix("application/problem+json") == true)
            #expect(reply.body.problemFields.contains(field), "\(reply.text)")
            #expect(try await app.count("users") == 0)
            #expect(app.mailer.sent.isEmpty)
        }
    }

    @Test("malformed JSON is a 400 problem, an oversized body a 413 problem, and neither stores anything")
    func malformedJSON() async throws {
        try await withTestApp { app in
            let reply = try await app.api.send(.POST, "/accounts", raw: #"{"email": "a@b.cd", "#)
            #expect(reply.status == .badRequest)
            #expect(reply.body["type"].string == "/problems/malformed-request")
            let wrongType = try await app.api.send(.POST, "/sessions", raw: "[1, 2]")
            #expect(wrongType.status.code >= 400 && wrongType.status.code < 500)
            let huge = #"{"email": "a@b.cd", "name": ""# + String(repeating: "x", count: 6 * 1024 * 1024) + #""}"#
            let tooLarge = try await app.api.send(.POST, "/accounts", raw: huge)
            #expect(tooLarge.status == .payloadTooLarge)
            #expect(tooLarge.headers.contentType?.subType == "problem+json")
            #expect(try await app.count("users") == 0)
        }
    }

    @Test("the verification link works once, within 48 hours")
    func verification() async throws {
        try await withTestApp { app in
            _ = try await app.api.send(.POST, "/accounts", json: Self.registration())
            let token = try #require(app.mailer.token(for: "/app/verify", to: "ada@example.org"))
            let notYet = try await app.api.send(
                .POST, "/sessions", json: ["email": "ada@example.org", "password": "correct horse battery"])
            #expect(notYet.status == .forbidden)
            #expect(notYet.body["type"].string == "/problems/email-not-verified")

            let verified = try await app.api.send(.POST, "/accounts/verification", json: ["token": .string(token)])
            #expect(verified.status == .ok)
            #expect(verified.body["emailVerified"].bool == true)
            let again = try await app.api.send(.POST, "/accounts/verification", json: ["token": .string(token)])
            #expect(again.status == .conflict)
            #expect(again.body["type"].string == "/problems/already-verified")
            let login = try await app.api.send(
                .POST, "/sessions", json: ["email": "ada@example.org", "password": "correct horse battery"])
            #expect(login.status == .created)
        }
    }

    @Test("an expired or unknown verification link is refused, and resending sends a new one")
    func expiredVerification() async throws {
        try await withTestApp { app in
            _ = try await app.api.send(.POST, "/accounts", json: Self.registration())
            let first = try #require(app.mailer.token(for: "/app/verify", to: "ada@example.org"))
            app.clock.advance(by: 48 * 3600 + 1)
            let expired = try await app.api.send(.POST, "/accounts/verification", json: ["token": .string(first)])
            #expect(expired.status == .unprocessableEntity)
            #expect(expired.body["errors"][0]["code"].string == "expired")
            let unknown = try await app.api.send(.POST, "/accounts/verification", json: ["token": "nonsense"])
            #expect(unknown.status == .unprocessableEntity)
            #expect(unknown.body["errors"][0]["field"].string == "token")

            let resend = try await app.api.send(.POST, "/accounts/verification-email", json: ["email": "ada@example.org"])
            #expect(resend.status == .accepted)
            let nobody = try await app.api.send(.POST, "/accounts/verification-email", json: ["email": "nobody@example.org"])
            #expect(nobody.status == .accepted)
            #expect(app.mailer.sent.count == 2)
            let second = try #require(app.mailer.token(for: "/app/verify", to: "ada@example.org"))
            #expect(second != first)
            let verified = try await app.api.send(.POST, "/accounts/verification", json: ["token": .string(second)])
            #expect(verified.status == .ok)
        }
    }

    @Test("resending a link supersedes the one sent before")
    func resendSupersedes() async throws {
        try await withTestApp { app in
            _ = try await app.api.send(.POST, "/accounts", json: Self.registration())
            let first = try #require(app.mailer.token(for: "/app/verify", to: "ada@example.org"))
            _ = try await app.api.send(.POST, "/accounts/verification-email", json: ["email": "ada@example.org"])
            let old = try await app.api.send(.POST, "/accounts/verification", json: ["token": .string(first)])
            #expect(old.status == .unprocessableEntity)
            #expect(old.body["errors"][0]["code"].string == "expired")
        }
    }

    @Test("guessing verification links is limited per client; asking for emails is limited per address")
    func verificationRateLimits() async throws {
        try await withTestApp { app in
            for attempt in 1...10 {
                let reply = try await app.api.send(.POST, "/accounts/verification", json: ["token": .string("guess-\(attempt)")])
                #expect(reply.status == .unprocessableEntity)
            }
            let blocked = try await app.api.send(.POST, "/accounts/verification", json: ["token": "guess-11"])
            #expect(blocked.status == .tooManyRequests)
            #expect(blocked.headers.first(name: "Retry-After") != nil)
            #expect(try await app.api.from("192.0.2.9").send(.POST, "/accounts/verification", json: ["token": "x"]).status
                == .unprocessableEntity)

            _ = try await app.api.send(.POST, "/accounts", json: Self.registration())
            for attempt in 1...4 {
                let reply = try await app.api.from("198.51.100.\(attempt)").send(
                    .POST, "/accounts/verification-email", json: ["email": "ada@example.org"])
                #expect(reply.status == .accepted)
            }
            let flood = try await app.api.from("198.51.100.99").send(
                .POST, "/password-resets", json: ["email": "ada@example.org"])
            #expect(flood.status == .accepted)
            let limited = try await app.api.from("198.51.100.100").send(
                .POST, "/password-resets", json: ["email": "ada@example.org"])
            #expect(limited.status == .tooManyRequests)
            #expect(app.mailer.sent.count == 6)
            let invalid = try await app.api.send(.POST, "/password-resets", json: ["email": "no address"])
            #expect(invalid.status == .unprocessableEntity)
        }
    }

    @Test("a mistyped address can be corrected before verification, with the password")
    func correctEmail() async throws {
        try await withTestApp { app in
            _ = try await app.api.send(.POST, "/accounts", json: Self.registration(["email": "ada@exmaple.org"]))
            let wrongPassword = try await app.api.send(
                .POST, "/accounts/email-correction",
                json: ["email": "ada@exmaple.org", "password": "not the password", "newEmail": "ada@example.org"])
            #expect(wrongPassword.status == .unauthorized)
            let corrected = try await app.api.send(
                .POST, "/accounts/email-correction",
                json: ["email": "ada@exmaple.org", "password": "correct horse battery", "newEmail": "ada@example.org"])
            #expect(corrected.status == .accepted)
            #expect(corrected.body["email"].string == "ada@example.org")
            let oldLink = try #require(app.mailer.token(for: "/app/verify", to: "ada@exmaple.org"))
            let stale = try await app.api.send(.POST, "/accounts/verification", json: ["token": .string(oldLink)])
            #expect(stale.status == .unprocessableEntity)
            let newLink = try #require(app.mailer.token(for: "/app/verify", to: "ada@example.org"))
            let verified = try await app.api.send(.POST, "/accounts/verification", json: ["token": .string(newLink)])
            #expect(verified.status == .ok)
            let tooLate = try await app.api.send(
                .POST, "/accounts/email-correction",
                json: ["email": "ada@example.org", "password": "correct horse battery", "newEmail": "ada2@example.org"])
            #expect(tooLate.status == .conflict)
        }
    }

    @Test("sign-in returns a 30-day bearer token stored only as a hash; sign-out revokes it")
    func loginAndLogout() async throws {
        try await withTestApp { app in
            let (patient, _) = try await app.patient()
            let token = try #require(patient.token)
            #expect(token.count >= 43)
            let stored: [String] = try await app.sql.raw("SELECT token_hash FROM sessions").all()
                .map { try $0.decode(column: "token_hash", as: String.self) }
            #expect(stored.count == 1)
            #expect(stored.first != token)
            #expect(stored.first == SecretToken.hash(token))

            let session = try await app.api.send(
                .POST, "/sessions", json: ["email": "patient@example.org", "password": .string(TestContext.password)])
            let expiresAt = try #require(session.body["expiresAt"].string.flatMap { try? Date($0, strategy: .iso8601) })
            #expect(abs(expiresAt.timeIntervalSince(Date.t0) - 30 * 24 * 3600) < 1)

            #expect(try await patient.send(.GET, "/me").status == .ok)
            #expect(try await patient.send(.DELETE, "/sessions/current").status == .noContent)
            let after = try await patient.send(.GET, "/me")
            #expect(after.status == .unauthorized)
            #expect(after.body["type"].string == "/problems/unauthenticated")
        }
    }

    @Test("a token stops working after 30 days")
    func tokenExpiry() async throws {
        try await withTestApp { app in
            let (patient, _) = try await app.patient()
            app.clock.advance(by: 30 * 24 * 3600 + 1)
            #expect(try await patient.send(.GET, "/me").status == .unauthorized)
        }
    }

    @Test("wrong passwords are refused with 401, the 11th attempt of a client within 15 minutes with 429; others' failures never lock the owner out")
    func loginRateLimit() async throws {
        try await withTestApp { app in
            _ = try await app.patient()
            let wrong: JSONValue = ["email": "patient@example.org", "password": "wrong password!"]
            let right: JSONValue = ["email": "patient@example.org", "password": .string(TestContext.password)]
            // Strangers from many addresses guess wrong: the owner signs in from their own.
            for attempt in 1...12 {
                let reply = try await app.api.from("198.51.100.\(attempt)").send(.POST, "/sessions", json: wrong)
                #expect(reply.status == .unauthorized)
            }
            // Past ten failures on the account every sign-in waits, longer with each failure: the owner too, but
            // only for seconds, and then gets in.
            let before = app.clock.now
            #expect(try await app.api.from("203.0.113.77").send(.POST, "/sessions", json: right).status == .created)
            #expect(app.clock.now.timeIntervalSince(before) == 1, "two failures past the free ten: one second")

            // One client that guessed ten times is refused, even with the right password.
            let guesser = app.api.from("198.51.100.200")
            for _ in 1...10 { #expect(try await guesser.send(.POST, "/sessions", json: wrong).status == .unauthorized) }
            let locked = try await guesser.send(.POST, "/sessions", json: right)
            #expect(locked.status == .tooManyRequests)
            let retryAfter = try #require(locked.headers.first(name: "Retry-After").flatMap(Int.init))
            #expect(retryAfter > 0 && retryAfter <= 15 * 60)
            #expect(try await app.api.from("203.0.113.78").send(.POST, "/sessions", json: right).status == .created)
            app.clock.advance(by: 15 * 60 + 1)
            #expect(try await guesser.send(.POST, "/sessions", json: right).status == .created)
        }
    }

    @Test("registration, address look-ups, email corrections and study join passwords are limited per client")
    func cheapAbuseIsLimited() async throws {
        try await withTestApp { app in
            let client = app.api.from("198.51.100.30")
            for index in 1...30 {
                #expect(try await client.send(.GET, "/accounts/email-available?email=probe\(index)%40example.org").status == .ok)
            }
            let probing = try await client.send(.GET, "/accounts/email-available?email=probe31%40example.org")
            #expect(probing.status == .tooManyRequests && probing.headers.first(name: "Retry-After") != nil)
            #expect(try await app.api.from("198.51.100.31").send(.GET, "/accounts/email-available?email=probe31%40example.org").status == .ok)

            func registration(_ index: Int) -> JSONValue {
                [
                    "email": .string("signup\(index)@example.org"), "password": .string(TestContext.password), "privacyPolicyVersion": "1",
                    "shareWithResearch": false, "locale": "en", "timeZone": "Europe/Vienna",
                ]
            }
            let registrar = app.api.from("198.51.100.40")
            for index in 1...10 { #expect(try await registrar.send(.POST, "/accounts", json: registration(index)).status == .created) }
            let eleventh = try await registrar.send(.POST, "/accounts", json: registration(11))
            #expect(eleventh.status == .tooManyRequests)
            #expect(try await app.count("users WHERE email = 'signup11@example.org'") == 0)

            // Correcting the address of an unverified account sends mail: limited like other mail on request.
            let corrector = app.api.from("198.51.100.50")
            for index in 1...5 {
                let corrected = try await corrector.send(
                    .POST, "/accounts/email-correction",
                    json: ["email": .string(index == 1 ? "signup1@example.org" : "fixed\(index - 1)@example.org"),
                        "password": .string(TestContext.password), "newEmail": .string("fixed\(index)@example.org")])
                #expect(corrected.status == .accepted, "\(corrected.text)")
            }
            let sixth = try await corrector.send(
                .POST, "/accounts/email-correction",
                json: ["email": "fixed5@example.org", "password": .string(TestContext.password), "newEmail": "fixed6@example.org"])
            #expect(sixth.status == .tooManyRequests)

            // A four-character join password does not fall to guessing.
            let (researcher, _) = try await app.staff("researcher", "lab@uni.example")
            let study = try await StudyAPITests().createStudy(researcher, StudyAPITests.study("password", password: "k7Q2"))
            let (patient, _) = try await app.patient("joiner@example.org")
            for guess in ["aaaa", "aaab", "aaac", "aaad", "aaae"] {
                let reply = try await patient.send(.POST, "/studies/\(study)/enrollment", json: ["consentVersion": "2026-1", "password": .string(guess)])
                #expect(reply.status == .unprocessableEntity)
            }
            let sixthGuess = try await patient.send(.POST, "/studies/\(study)/enrollment", json: ["consentVersion": "2026-1", "password": "k7Q2"])
            #expect(sixthGuess.status == .tooManyRequests)
            app.clock.advance(by: 15 * 60 + 1)
            let joined = try await patient.send(.POST, "/studies/\(study)/enrollment", json: ["consentVersion": "2026-1", "password": "k7Q2"])
            #expect(joined.status == .created, "\(joined.text)")
        }
    }

    @Test("one client guessing many accounts is limited too, and an unknown address looks like a wrong password")
    func clientRateLimit() async throws {
        try await withTestApp { app in
            for index in 1...10 {
                let reply = try await app.api.send(
                    .POST, "/sessions", json: ["email": .string("nobody\(index)@example.org"), "password": "whatever it is"])
                #expect(reply.status == .unauthorized)
                #expect(reply.body["type"].string == "/problems/invalid-credentials")
            }
            let blocked = try await app.api.send(
                .POST, "/sessions", json: ["email": "nobody11@example.org", "password": "whatever it is"])
            #expect(blocked.status == .tooManyRequests)
            let otherClient = try await app.api.from("192.0.2.1").send(
                .POST, "/sessions", json: ["email": "nobody11@example.org", "password": "whatever it is"])
            #expect(otherClient.status == .unauthorized)
        }
    }

    @Test("using one reset link spends the older ones still out for the account")
    func olderResetLinksDie() async throws {
        try await withTestApp { app in
            // setup
            _ = try await app.patient()
            let first = try await app.api.send(.POST, "/password-resets", json: ["email": "patient@example.org"])
            let older = try #require(app.mailer.token(for: "/app/reset-password", to: "patient@example.org"))
            _ = try await app.api.send(.POST, "/password-resets", json: ["email": "patient@example.org"])
            let newer = try #require(app.mailer.token(for: "/app/reset-password", to: "patient@example.org"))
            #expect(first.status == .accepted && older != newer)
            // act
            let used = try await app.api.send(
                .POST, "/password-resets/confirmation", json: ["token": .string(newer), "newPassword": "a brand new passphrase"])
            let stale = try await app.api.send(
                .POST, "/password-resets/confirmation", json: ["token": .string(older), "newPassword": "an attacker's passphrase"])
            // verify
            #expect(used.status == .noContent || used.status == .ok)
            #expect(stale.status == .unprocessableEntity)
            #expect(stale.body.problemFields == ["token"])
            #expect(try await app.signIn("patient@example.org", password: "a brand new passphrase").token != nil)
        }
    }

    @Test("password reset: same answer for any address, link works once within an hour, every session ends")
    func passwordReset() async throws {
        try await withTestApp { app in
            let (patient, _) = try await app.patient()
            let unknown = try await app.api.send(.POST, "/password-resets", json: ["email": "nobody@example.org"])
            #expect(unknown.status == .accepted)
            let known = try await app.api.send(.POST, "/password-resets", json: ["email": "patient@example.org"])
            #expect(known.status == .accepted)
            #expect(known.text == unknown.text)
            let token = try #require(app.mailer.token(for: "/app/reset-password", to: "patient@example.org"))
            #expect(app.mailer.sent.allSatisfy { $0.to != "nobody@example.org" })

            let tooShort = try await app.api.send(
                .POST, "/password-resets/confirmation", json: ["token": .string(token), "newPassword": "short"])
            #expect(tooShort.status == .unprocessableEntity)
            #expect(tooShort.body.problemFields == ["newPassword"])

            let reset = try await app.api.send(
                .POST, "/password-resets/confirmation", json: ["token": .string(token), "newPassword": "a brand new passphrase"])
            #expect(reset.status == .noContent)
            #expect(try await patient.send(.GET, "/me").status == .unauthorized)
            let reused = try await app.api.send(
                .POST, "/password-resets/confirmation", json: ["token": .string(token), "newPassword": "yet another passphrase"])
            #expect(reused.status == .unprocessableEntity)
            #expect(reused.body["errors"][0]["code"].string == "alreadyUsed")
            _ = try await app.signIn("patient@example.org", password: "a brand new passphrase")
        }
    }

    @Test("a reset link expires after one hour")
    func passwordResetExpiry() async throws {
        try await withTestApp { app in
            _ = try await app.patient()
            _ = try await app.api.send(.POST, "/password-resets", json: ["email": "patient@example.org"])
            let token = try #require(app.mailer.token(for: "/app/reset-password", to: "patient@example.org"))
            app.clock.advance(by: 3601)
            let reply = try await app.api.send(
                .POST, "/password-resets/confirmation", json: ["token": .string(token), "newPassword": "a brand new passphrase"])
            #expect(reply.status == .unprocessableEntity)
            #expect(reply.body["errors"][0]["code"].string == "expired")
        }
    }

    @Test("changing the password needs the current one and signs out other devices")
    func changePassword() async throws {
        try await withTestApp { app in
            let (phone, _) = try await app.patient()
            let tablet = try await app.signIn("patient@example.org")
            let wrong = try await phone.send(
                .PUT, "/me/password", json: ["currentPassword": "not my password", "newPassword": "another passphrase"])
            #expect(wrong.status == .unprocessableEntity)
            #expect(wrong.body.problemFields == ["currentPassword"])
            let changed = try await phone.send(
                .PUT, "/me/password",
                json: ["currentPassword": .string(TestContext.password), "newPassword": "another passphrase"])
            #expect(changed.status == .noContent)
            #expect(try await phone.send(.GET, "/me").status == .ok)
            #expect(try await tablet.send(.GET, "/me").status == .unauthorized)
            let unauthenticated = try await app.api.send(
                .PUT, "/me/password", json: ["currentPassword": "x", "newPassword": "another passphrase"])
            #expect(unauthenticated.status == .unauthorized)
        }
    }

    @Test("the profile can be read and edited; bad values change nothing")
    func profile() async throws {
        try await withTestApp { app in
            let (patient, _) = try await app.patient(shareWithResearch: true)
            let updated = try await patient.send(
                .PATCH, "/me",
                json: ["name": "Ada", "locale": "de", "timeZone": "America/New_York", "shareWithResearch": false])
            #expect(updated.status == .ok)
            #expect(updated.body["name"].string == "Ada")
            #expect(updated.body["locale"].string == "de")
            #expect(updated.body["timeZone"].string == "America/New_York")
            #expect(updated.body["patient"]["shareWithResearch"].bool == false)
            let revoked = try await app.count("consents WHERE document = 'researchSharing' AND revoked_at IS NOT NULL")
            #expect(revoked == 1)

            let refused = try await patient.send(.PATCH, "/me", json: ["name": "Bea", "timeZone": "Nowhere/Land"])
            #expect(refused.status == .unprocessableEntity)
            #expect(refused.body.problemFields == ["timeZone"])
            let unchanged = try await patient.send(.GET, "/me")
            #expect(unchanged.body["name"].string == "Ada")
            #expect(unchanged.body["timeZone"].string == "America/New_York")
            #expect(try await app.api.send(.GET, "/me").status == .unauthorized)
        }
    }

    @Test("messages follow Accept-Language")
    func language() async throws {
        try await withTestApp { app in
            var german = app.api
            german.language = "de-AT,de;q=0.9,en;q=0.5"
            let reply = try await german.send(.GET, "/me")
            #expect(reply.body["detail"].string == "Bitte melden Sie sich an.")
            let policy = try await german.send(.GET, "/privacy-policy")
            #expect(policy.body["locale"].string == "de")
            #expect(policy.body["version"].string == "1")
        }
    }
}
