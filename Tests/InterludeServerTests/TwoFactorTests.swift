import Fluent
import Foundation
import InterludeCore
import Testing
import VaporTesting

@testable import InterludeServer

@Suite("Two-factor sign-in")
struct TwoFactorTests {
    /// A therapist who set two-factor sign-in up in the console; returns the browser and the secret.
    func enrolled(_ app: TestContext) async throws -> (browser: ConsoleBrowser, secret: [UInt8]) {
        _ = try await app.staff("therapist", "berger@praxis.example")
        let browser = ConsoleBrowser(app)
        _ = try await browser.signIn("berger@praxis.example")
        return (browser, try await turnOn(app, in: browser))
    }

    /// Reads the secret off the account page and confirms it with a current code, as a person with the app does.
    func turnOn(_ app: TestContext, in browser: ConsoleBrowser) async throws -> [UInt8] {
        let page = try await browser.get("/console/password")
        let shown = try #require(
            page.html.range(of: "id=\"twoFactorSecret\">").map { page.html[$0.upperBound...].prefix { $0 != "<" } })
        let secret = try #require(Base32.decode(String(shown)))
        let confirmed = try await browser.post("/console/two-factor", [("code", Self.code(secret, app))])
        try #require(confirmed.status == .seeOther)
        return secret
    }

    static func code(_ secret: [UInt8], _ app: TestContext) -> String {
        TimeBasedCode(secret: secret).code(step: TimeBasedCode.step(at: app.clock.now))
    }

    @Test("setting it up needs a code from the app; a wrong one leaves it off")
    func setUp() async throws {
        try await withTestApp { app in
            // setup
            _ = try await app.staff("therapist", "berger@praxis.example")
            let browser = ConsoleBrowser(app)
            _ = try await browser.signIn("berger@praxis.example")
            let page = try await browser.get("/console/password")
            // act
            let refused = try await browser.post("/console/two-factor", [("code", "123456")])
            // verify
            #expect(page.html.contains("otpauth://totp/Interlude%3Aberger@praxis.example?secret="))
            #expect(refused.status == .unprocessableEntity)
            let user = try #require(try await UserRecord.query(on: app.database).first())
            #expect(user.totpSecret == nil)
            #expect(user.totpPendingSecret?.hasPrefix(FieldCipher.prefix) == true, "the secret is sealed at rest")
        }
    }

    @Test("with it on, the console needs a current code, and a code works once")
    func consoleSignIn() async throws {
        try await withTestApp { app in
            // setup
            let (_, secret) = try await enrolled(app)
            app.clock.advance(by: 30)
            // act
            let withoutCode = try await ConsoleBrowser(app).signIn("berger@praxis.example")
            let wrongCode = try await ConsoleBrowser(app).signIn("berger@praxis.example", code: "000000")
            let code = Self.code(secret, app)
            let accepted = try await ConsoleBrowser(app).signIn("berger@praxis.example", code: code)
            let replayed = try await ConsoleBrowser(app).signIn("berger@praxis.example", code: code)
            app.clock.advance(by: 30)
            let next = try await ConsoleBrowser(app).signIn("berger@praxis.example", code: Self.code(secret, app))
            // verify
            #expect(withoutCode.status == .unprocessableEntity)
            #expect(withoutCode.html.contains("code-error"))
            #expect(wrongCode.status == .unprocessableEntity)
            #expect(accepted.status == .seeOther)
            #expect(replayed.status == .unprocessableEntity)
            #expect(next.status == .seeOther)
        }
    }

    @Test("the API sign-in of such an account needs the code too")
    func apiSignIn() async throws {
        try await withTestApp { app in
            // setup
            let (_, secret) = try await enrolled(app)
            app.clock.advance(by: 30)
            let credentials: [String: JSONValue] = [
                "email": "berger@praxis.example", "password": .string(TestContext.password),
            ]
            // act
            let withoutCode = try await app.api.send(.POST, "/sessions", json: .object(credentials))
            let withCode = try await app.api.send(
                .POST, "/sessions", json: .object(credentials.merging(["code": .string(Self.code(secret, app))]) { $1 })
            )
            // verify
            #expect(withoutCode.status == .unprocessableEntity)
            #expect(withoutCode.body.problemFields == ["code"])
            #expect(withoutCode.body["token"].isNull)
            #expect(withCode.status == .created)
        }
    }

    @Test("guessing codes with the right password locks the sign-in like wrong passwords do")
    func guessingLocks() async throws {
        try await withTestApp { app in
            // setup
            let (_, secret) = try await enrolled(app)
            app.clock.advance(by: 30)
            let client = app.api.fromNewAddress
            // act
            for guess in 0..<RateLimitPolicy.login.limit {
                _ = try await client.send(
                    .POST, "/sessions",
                    json: [
                        "email": "berger@praxis.example", "password": .string(TestContext.password),
                        "code": .string(String(format: "%06d", guess)),
                    ])
            }
            let locked = try await client.send(
                .POST, "/sessions",
                json: [
                    "email": "berger@praxis.example", "password": .string(TestContext.password),
                    "code": .string(Self.code(secret, app)),
                ])
            // verify
            #expect(locked.status == .tooManyRequests)
        }
    }

    @Test("when an administrator requires it, staff without it are led to set it up and the API refuses them")
    func required() async throws {
        try await withTestApp { app in
            // setup
            let (_, secret) = try await enrolled(app)
            _ = try await app.staff("researcher", "lab@uni.example")
            _ = try await app.staff("admin", "admin@praxis.example")
            let admin = ConsoleBrowser(app)
            _ = try await admin.signIn("admin@praxis.example")
            _ = try await admin.get("/console/settings")
            // act
            let saved = try await admin.post("/console/settings/two-factor", [("required", "on")])
            let researcher = ConsoleBrowser(app)
            let signedIn = try await researcher.signIn("lab@uni.example")
            let studies = try await researcher.get("/console/studies")
            let account = try await researcher.get("/console/password")
            let api = try await app.api.send(
                .POST, "/sessions", json: ["email": "lab@uni.example", "password": .string(TestContext.password)])
            app.clock.advance(by: 30)
            let therapist = ConsoleBrowser(app)
            _ = try await therapist.signIn("berger@praxis.example", code: Self.code(secret, app))
            _ = try await therapist.get("/console/password")
            app.clock.advance(by: 30)
            let disable = try await therapist.post(
                "/console/two-factor/disable",
                [("currentPassword", TestContext.password), ("code", Self.code(secret, app))])
            // verify
            #expect(saved.status == .seeOther)
            #expect(try await TwoFactorService(database: app.database, services: app.app.interlude).isRequired())
            #expect(signedIn.status == .seeOther)
            #expect(studies.status == .seeOther)
            #expect(studies.location == "/console/password")
            #expect(account.html.contains("otpauth://"))
            #expect(api.status == .forbidden)
            #expect(api.body["type"].string == "/problems/two-factor-setup-required")
            #expect(disable.status == .forbidden)
            #expect(
                try await UserRecord.query(on: app.database).filter(\.$email == "berger@praxis.example").first()?
                    .totpSecret != nil)
        }
    }

    @Test("a staff member turns it off with password and code; an administrator resets it for one who lost the phone")
    func offAndReset() async throws {
        try await withTestApp { app in
            // setup
            let (browser, secret) = try await enrolled(app)
            _ = try await app.staff("admin", "admin@praxis.example")
            app.clock.advance(by: 30)
            _ = try await browser.get("/console/password")
            // act
            let wrongPassword = try await browser.post(
                "/console/two-factor/disable",
                [("currentPassword", "not my password"), ("code", Self.code(secret, app))])
            let off = try await browser.post(
                "/console/two-factor/disable",
                [("currentPassword", TestContext.password), ("code", Self.code(secret, app))])
            app.clock.advance(by: 30)
            let again = try await turnOn(app, in: browser)
            let admin = ConsoleBrowser(app)
            _ = try await admin.signIn("admin@praxis.example")
            _ = try await admin.get("/console/users")
            let therapist = try #require(
                try await UserRecord.query(on: app.database).filter(\.$email == "berger@praxis.example").first())
            let reset = try await admin.post("/console/users/\(try therapist.requireID())/two-factor/reset", [])
            let signIn = try await ConsoleBrowser(app).signIn("berger@praxis.example")
            // verify
            #expect(wrongPassword.status == .unprocessableEntity)
            #expect(off.status == .seeOther)
            #expect(!again.isEmpty)
            #expect(reset.status == .seeOther)
            #expect(signIn.status == .seeOther, "after the reset the password alone signs in")
            let actions = try await AuditEventRecord.query(on: app.database).all().map(\.action)
            for action in [AuditAction.twoFactorEnabled, .twoFactorDisabled, .twoFactorReset] {
                #expect(actions.contains(action.rawValue), "\(action)")
            }
        }
    }
}
