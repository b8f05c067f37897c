import Foundation
import Testing

@testable import InterludeServer

@Suite("Settings, texts and mail formatting")
struct SupportTests {
    // MARK: Settings

    @Test("without any environment the server runs on the embedded database with mail to an outbox, on port 8080")
    func defaultSettings() throws {
        // act
        let defaults = try Settings.fromEnvironment([:])

        // verify
        #expect(defaults.database == .sqliteFile("./data/interlude.sqlite"))
        #expect(defaults.mail == .outbox("./data/outbox"))
        #expect(defaults.publicURL == "http://localhost:8080")
        #expect(defaults.port == 8080)
        #expect(defaults.databaseConnectionsPerCore == 4)
        #expect(defaults.sqliteDriver == .embedded && defaults.apiFastPaths)
    }

    @Test("settings come from the environment: PostgreSQL, the public address without its slash, SMTP over TLS")
    func customSettings() throws {
        // act
        let custom = try Settings.fromEnvironment([
            "INTERLUDE_DATA_DIR": "/var/lib/interlude", "DATABASE_URL": "postgres://u:p@db/interlude",
            "PUBLIC_URL": "https://therapy.example/", "SMTP_URL": "smtps://mailer:secret@mail.example",
            "MAIL_FROM": "Praxis <praxis@therapy.example>", "PORT": "9000", "DATABASE_CONNECTIONS_PER_CORE": "8",
            "SQLITE_DRIVER": "Fluent", "API_FAST_PATHS": "off",
        ])

        // verify
        #expect(custom.database == .postgres(url: "postgres://u:p@db/interlude", schema: nil))
        #expect(custom.publicURL == "https://therapy.example")
        #expect(custom.secureCookies)
        #expect(custom.databaseConnectionsPerCore == 8)
        #expect(custom.sqliteDriver == .fluent && !custom.apiFastPaths)
        #expect(
            custom.mail
                == .smtp(
                    SMTPServer(
                        host: "mail.example", port: 465, security: .implicitTLS, username: "mailer", password: "secret")
                ))
    }

    @Test(
        "a bad setting stops the start with an error that names it",
        arguments: [
            ("PORT", "eighty"), ("DATABASE_URL", "mysql://x"), ("PUBLIC_URL", "ftp://x"), ("SMTP_URL", "http://x"),
            ("DATABASE_SCHEMA", "Robert'); DROP"), ("DATABASE_CONNECTIONS_PER_CORE", "0"),
            ("SQLITE_DRIVER", "sqlite3"), ("API_FAST_PATHS", "fast"),
        ])
    func badSetting(_ name: String, value: String) {
        // setup
        var environment = ["DATABASE_URL": "postgres://u@db/x"]
        environment[name] = value

        // act / verify
        #expect {
            try Settings.fromEnvironment(environment)
        } throws: { error in
            error is SettingsError && "\(error)".contains(name)
        }
    }

    @Test(
        "an SMTP address without a port takes submission's, and tls=off speaks plain SMTP",
        arguments: [
            ("smtp://relay.local:25?tls=off", 25, SMTPServer.Security.none), ("smtp://relay.local", 587, .startTLS),
        ])
    func smtpURL(_ url: String, port: Int, security: SMTPServer.Security) throws {
        // act
        let server = try SMTPServer(url: url)

        // verify
        #expect(server.port == port && server.security == security)
    }

    // MARK: Texts

    static var root: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
    }

    static func table(_ language: String) throws -> [String: String] {
        let data = try Data(contentsOf: root.appendingPathComponent("Resources/Locales/\(language).json"))
        return try JSONDecoder().decode([String: String].self, from: data)
    }

    @Test("German and English texts have the same keys")
    func sameKeys() throws {
        // act
        let english = try Self.table("en")
        let german = try Self.table("de")

        // verify
        #expect(Set(english.keys).symmetricDifference(german.keys).isEmpty)
    }

    @Test("every text a page uses exists")
    func pageTextsExist() throws {
        // setup
        let keys = Set(try Self.table("en").keys.map { $0.replacingOccurrences(of: ".", with: "_") })
        let enumerator = FileManager.default.enumerator(
            at: Self.root.appendingPathComponent("Resources/Views"), includingPropertiesForKeys: nil)
        let regex = try Regex("#\\(t\\.([A-Za-z0-9_]+)\\)")
        var used: [(file: String, key: String)] = []

        // act
        while let file = enumerator?.nextObject() as? URL {
            guard file.pathExtension == "leaf" else { continue }
            let text = try String(contentsOf: file, encoding: .utf8)
            used += text.matches(of: regex).map { (file.lastPathComponent, String(text[$0.output[1].range!])) }
        }

        // verify
        #expect(used.count > 100)
        for (file, key) in used { #expect(keys.contains(key), "\(file) uses missing text \(key)") }
    }

    @Test("every kind of audit event has a name in the audit log")
    func auditActionsNamed() throws {
        // setup
        let english = try Self.table("en")

        // act / verify
        for action in AuditAction.allCases { #expect(english["audit.\(action.rawValue)"] != nil, "\(action)") }
    }

    // MARK: Mail formatting

    @Test("a message's lines are dot-stuffed and CRLF-terminated")
    func dotStuffing() {
        // act / verify
        #expect(SMTPClient.dotStuffed("a\n.b\r\n..c\n") == "a\r\n..b\r\n...c")
    }

    @Test(
        "headers encode non-ASCII text and cannot carry another header",
        arguments: [("Grüße", "=?UTF-8?B?R3LDvMOfZQ==?="), ("Hello\r\nBcc: x", "Hello  Bcc: x")])
    func headerEncoding(_ text: String, encoded: String) {
        // act / verify
        #expect(MIMEMessage.encodeHeader(text) == encoded)
    }

    @Test("a message renders with its addresses and a text and an HTML part")
    func rendering() {
        // act
        let rendered = MIMEMessage.render(
            EmailMessage(to: "a@example.org", subject: "Test", text: "Text", html: "<p>HTML</p>"),
            from: "Praxis Müller <p@example.org>", date: Date.t0)

        // verify
        #expect(MIMEMessage.address(of: "Praxis Berger <praxis@example.org>") == "praxis@example.org")
        #expect(rendered.contains("\r\nTo: a@example.org\r\n"))
        #expect(rendered.contains("From: =?UTF-8?B?"))
        let parts = ParsedMessage(rendered)
        #expect(parts.text == "Text")
        #expect(parts.html == "<p>HTML</p>")
    }

    @Test("URL-safe base64 has no padding and no + or /, and reads back to the same bytes")
    func base64URL() {
        for length in 0..<48 {
            let data = Data((0..<length).map { _ in UInt8.random(in: 0...255) })
            let text = data.base64URLEncoded
            #expect(!text.contains("+") && !text.contains("/") && !text.contains("="))
            #expect(Data(base64URLEncoded: text) == data)
            #expect(
                text
                    == data.base64EncodedString().replacingOccurrences(of: "+", with: "-")
                    .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: ""))
        }
    }
}
