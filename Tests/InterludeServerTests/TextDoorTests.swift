import Fluent
import Foundation
import InterludeCore
import Testing
import VaporTesting

@testable import InterludeServer

/// Control characters forge log lines and hide text; look-alike letters make a second account of one address.
/// Both are refused at the door, naming the field, with nothing changed.
@Suite("Text at the door: control characters refused by field, addresses in one ASCII spelling")
struct TextDoorTests {
    @Test(
        "a registration carrying a control character is refused naming the field, and no account is made",
        arguments: [
            (["name": "Ada\u{07}"], "name"), (["name": "Ada\nLovelace"], "name"),
            (["timeZone": "Europe/Vienna\u{00}"], "timeZone"), (["password": "correct horse\u{1B}[2J"], "password"),
            (["name": "Ada \u{202E}ecalevol"], "name"), (["name": "Ada \u{2067}Lovelace\u{2069}"], "name"),
        ] as [([String: JSONValue], String)])
    func registrationRefused(changes: [String: JSONValue], field: String) async throws {
        try await withTestApp { app in
            // act
            let refused = try await app.api.send(.POST, "/accounts", json: AccountAPITests.registration(changes))
            // verify
            #expect(refused.status == .unprocessableEntity, "\(refused.text)")
            #expect(refused.body.problemFields == [field])
            #expect(refused.body["errors"][0]["code"].string == "controlCharacter")
            #expect(try await app.count("users") == 0)
        }
    }

    @Test("a study's running text keeps its line breaks; its one-line title takes none")
    func studyTexts() async throws {
        try await withTestApp { app in
            // setup
            let (researcher, _) = try await app.staff("researcher", "lab@uni.example")
            let study = StudyAPITests.study("open").merging(["description": "First line.\nSecond line."])
            // act
            let refused = try await researcher.send(.POST, "/studies", json: study.merging(["title": "Stress\nstudy"]))
            let accepted = try await researcher.send(.POST, "/studies", json: study)
            // verify
            #expect(refused.status == .unprocessableEntity)
            #expect(refused.body.problemFields == ["title"])
            #expect(accepted.status == .created, "\(accepted.text)")
            #expect(accepted.body["description"].string == "First line.\nSecond line.")
            #expect(try await app.count("studies") == 1)
        }
    }

    @Test("a query parameter with a control character is refused naming it")
    func queryRefused() async throws {
        try await withTestApp { app in
            let refused = try await app.api.send(.GET, "/accounts/email-available?email=ada%07@example.org")
            let accepted = try await app.api.send(.GET, "/accounts/email-available?email=ada@example.org")
            #expect(refused.status == .unprocessableEntity)
            #expect(refused.body.problemFields == ["email"])
            #expect(accepted.status == .ok)
        }
    }

    @Test("a console form with a control character is refused and the profile stays as it was")
    func consoleFormRefused() async throws {
        try await withTestApp { app in
            // setup
            _ = try await app.staff("therapist", "berger@praxis.example")
            let browser = ConsoleBrowser(app)
            _ = try await browser.signIn("berger@praxis.example")
            _ = try await browser.get("/console/profile")
            let profile: [(String, String)] = [
                ("gender", "female"), ("officeAddress", "Hauptplatz 1\n9020 Klagenfurt"), ("phone", "+43 463 1"),
                ("emergencyNumber", "+43 142"),
            ]
            // act
            let refused = try await browser.post("/console/profile", [("fullName", "Dr. Berger\u{1B}[8m")] + profile)
            _ = try await browser.get("/console/profile")
            let accepted = try await browser.post("/console/profile", [("fullName", "Dr. Anna Berger")] + profile)
            // verify
            #expect(refused.status == .unprocessableEntity)
            #expect(accepted.status == .seeOther)
            let stored = try #require(try await TherapistProfileRecord.query(on: app.database).first())
            #expect(stored.fullName == "Dr. Anna Berger")
            #expect(stored.officeAddress == "Hauptplatz 1\n9020 Klagenfurt")
        }
    }

    @Test(
        "the door reads a body's media type as Vapor spells it, in any case and with parameters",
        arguments: [
            ("application/json", "application", "json"), ("Application/JSON; charset=utf-8", "application", "json"),
            (" application / problem+json ", "application", "problem+json"),
            ("application/x-www-form-urlencoded, text/plain", "application", "x-www-form-urlencoded"),
        ])
    func mediaTypeRead(header: String, type: String, subType: String) {
        let read = TextDoorMiddleware.mediaType(in: ["Content-Type": header])
        #expect(read?.type == type)
        #expect(read?.subType == subType)
    }

    @Test(
        "a content type without both a type and a subtype names none", arguments: ["json", "application/", "a/b/c", ""])
    func mediaTypeUnread(header: String) {
        #expect(TextDoorMiddleware.mediaType(in: ["Content-Type": header]) == nil)
        #expect(TextDoorMiddleware.mediaType(in: [:]) == nil)
    }

    @Test("a body sent as JSON in capitals is scanned all the same")
    func capitalisedJSONScanned() async throws {
        try await withTestApp { app in
            let body = try JSONEncoder().encode(AccountAPITests.registration(["name": "Ada\u{07}"]))
            let refused = try await app.api.send(
                .POST, "/accounts", bytes: body,
                contentType: HTTPMediaType(type: "Application", subType: "JSON", parameters: ["charset": "UTF-8"]))
            #expect(refused.status == .unprocessableEntity, "\(refused.text)")
            #expect(refused.body.problemFields == ["name"])
            #expect(try await app.count("users") == 0)
        }
    }

    @Test("a body sent as any type at all is scanned as JSON, as the operations may read it so")
    func wildcardScanned() async throws {
        try await withTestApp { app in
            // A password has no check of its own for control characters: only the door stands in their way.
            let body = try JSONEncoder().encode(AccountAPITests.registration(["password": "correct horse\u{1B}[2J"]))
            let refused = try await app.api.send(
                .POST, "/accounts", bytes: body, contentType: HTTPMediaType(type: "*", subType: "*"))
            #expect(refused.status == .unprocessableEntity, "\(refused.text)")
            #expect(refused.body.problemFields == ["password"])
            #expect(try await app.count("users") == 0)
        }
    }

    @Test("two spellings of one address are one account: the second registration is refused, either finds it")
    func homographDuplicate() async throws {
        try await withTestApp { app in
            // act
            let first = try await app.api.send(
                .POST, "/accounts", json: AccountAPITests.registration(["email": "Anna@Exämple.org"]))
            let second = try await app.api.fromNewAddress.send(
                .POST, "/accounts", json: AccountAPITests.registration(["email": "anna@xn--exmple-cua.org"]))
            let lookAlike = try await app.api.fromNewAddress.send(
                .POST, "/accounts", json: AccountAPITests.registration(["email": "аnna@example.org"]))
            let signIn = try await app.api.send(
                .POST, "/sessions", json: ["email": "ANNA@exämple.org", "password": "correct horse battery"])
            // verify
            #expect(first.status == .created, "\(first.text)")
            #expect(
                signIn.body["type"].string == "/problems/email-not-verified", "the account is found, not yet verified")
            #expect(first.body["email"].string == "anna@xn--exmple-cua.org")
            #expect(second.status == .conflict)
            #expect(lookAlike.status == .unprocessableEntity)
            #expect(lookAlike.body.problemFields == ["email"])
            #expect(try await app.count("users") == 1)
            #expect(try #require(app.mailer.sent.last).to == "anna@xn--exmple-cua.org")
        }
    }
}
