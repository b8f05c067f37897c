import Foundation
import Testing

@testable import InterludeServer

@Suite("Settings, texts and mail formatting")
struct SupportTests {
    @Test("settings come from the environment with documented defaults; a bad value names itself")
    func settings() throws {
        let defaults = try Settings.fromEnvironment([:])
        #expect(defaults.database == .sqliteFile("./data/interlude.sqlite"))
        #expect(defaults.mail == .outbox("./data/outbox"))
        #expect(defaults.publicURL == "http://localhost:8080")
        #expect(defaults.port == 8080)
        let custom = try Settings.fromEnvironment([
            "INTERLUDE_DATA_DIR": "/var/lib/interlude", "DATABASE_URL": "postgres://u:p@db/interlude",
            "PUBLIC_URL": "https://therapy.example/", "SMTP_URL": "smtps://mailer:secret@mail.example",
            "MAIL_FROM": "Praxis <praxis@therapy.example>", "PORT": "9000",
        ])
        #expect(custom.database == .postgres(url: "postgres://u:p@db/interlude", schema: nil))
        #expect(custom.publicURL == "https://therapy.example")
        #expect(custom.secureCookies)
        #expect(
            custom.mail
                == .smtp(SMTPServer(host: "mail.example", port: 465, security: .implicitTLS, username: "mailer", password: "secret")))
        for (name, value) in [("PORT", "eighty"), ("DATABASE_URL", "mysql://x"), ("PUBLIC_URL", "ftp://x"), ("SMTP_URL", "http://x"),
            ("DATABASE_SCHEMA", "Robert'); DROP")]
        {
            var environment = ["DATABASE_URL": "postgres://u@db/x"]
            environment[name] = value
            #expect(throws: SettingsError.self) { try Settings.fromEnvironment(environment) }
            do { _ = try Settings.fromEnvironment(environment) } catch { #expect("\(error)".contains(name)) }
        }
        #expect(try SMTPServer(url: "smtp://relay.local:25?tls=off").security == .none)
        #expect(try SMTPServer(url: "smtp://relay.local").port == 587)
    }

    @Test("German and English texts have the same keys, and every key a page uses exists")
    func localisation() throws {
        let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        func table(_ language: String) throws -> [String: String] {
            let data = try Data(contentsOf: directory.appendingPathComponent("Resources/Locales/\(language).json"))
            return try JSONDecoder().decode([String: String].self, from: data)
        }
        let english = try table("en")
        let german = try table("de")
        #expect(Set(english.keys) == Set(german.keys))
        let templateKeys = Set(english.keys.map { $0.replacingOccurrences(of: ".", with: "_") })
        let views = directory.appendingPathComponent("Resources/Views")
        let enumerator = FileManager.default.enumerator(at: views, includingPropertiesForKeys: nil)
        var checked = 0
        while let file = enumerator?.nextObject() as? URL {
            guard file.pathExtension == "leaf" else { continue }
            let text = try String(contentsOf: file, encoding: .utf8)
            let regex = try Regex("#\\(t\\.([A-Za-z0-9_]+)\\)")
            for match in text.matches(of: regex) {
                let key = String(text[match.output[1].range!])
                #expect(templateKeys.contains(key), "\(file.lastPathComponent) uses missing text \(key)")
                checked += 1
            }
        }
        #expect(checked > 100)
        for action in AuditAction.allCases {
            #expect(english["audit.\(action.rawValue)"] != nil)
        }
    }

    @Test("messages are dot-stuffed, CRLF-terminated and encode non-ASCII subjects")
    func mime() {
        #expect(SMTPClient.dotStuffed("a\n.b\r\n..c\n") == "a\r\n..b\r\n...c")
        #expect(MIMEMessage.encodeHeader("Grüße") == "=?UTF-8?B?R3LDvMOfZQ==?=")
        #expect(MIMEMessage.encodeHeader("Hello\r\nBcc: x") == "Hello  Bcc: x")
        #expect(MIMEMessage.address(of: "Praxis Berger <praxis@example.org>") == "praxis@example.org")
        let rendered = MIMEMessage.render(
            EmailMessage(to: "a@example.org", subject: "Test", text: "Text", html: "<p>HTML</p>"),
            from: "Praxis Müller <p@example.org>", date: Date.t0)
        #expect(rendered.contains("\r\nTo: a@example.org\r\n"))
        #expect(rendered.contains("From: =?UTF-8?B?"))
        let parts = ParsedMessage(rendered)
        #expect(parts.text == "Text")
        #expect(parts.html == "<p>HTML</p>")
    }
}
