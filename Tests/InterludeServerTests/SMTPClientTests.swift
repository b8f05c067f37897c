import Foundation
import NIOPosix
import Testing

@testable import InterludeServer

/// The SMTP server the test script starts (scripts/support/smtp-test-server.py, on aiosmtpd).
struct TestSMTPServer {
    let port: Int
    let loginOnlyPort: Int
    let directory: String
    let caFile: String

    static let username = "interlude"
    static let password = "test-secret"

    /// Set by the test script; in CI a missing server is a failure, never a skip.
    static var configured: TestSMTPServer? {
        let environment = ProcessInfo.processInfo.environment
        guard let port = environment["TEST_SMTP_PORT"].flatMap(Int.init),
            let loginOnly = environment["TEST_SMTP_LOGIN_ONLY_PORT"].flatMap(Int.init),
            let directory = environment["TEST_SMTP_DIRECTORY"]
        else { return nil }
        return TestSMTPServer(
            port: port, loginOnlyPort: loginOnly, directory: directory, caFile: directory + "/smtp-cert.pem")
    }

    static var available: Bool {
        configured != nil || ProcessInfo.processInfo.environment["CI"] == "true"
    }

    func server(port: Int, password: String = Self.password, trusted: Bool = true) -> SMTPServer {
        SMTPServer(
            host: "127.0.0.1", port: port, security: .startTLS, username: Self.username, password: password,
            caFile: trusted ? caFile : nil)
    }

    struct Delivery {
        let envelope: [String: Any]
        let message: String
    }

    /// The message the server received for `recipient`.
    func delivery(to recipient: String) throws -> Delivery? {
        for name in try FileManager.default.contentsOfDirectory(atPath: directory) where name.hasSuffix(".json") {
            let base = directory + "/" + String(name.dropLast(5))
            let envelope =
                try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: base + ".json")))
                as? [String: Any] ?? [:]
            guard (envelope["rcptTos"] as? [String])?.contains(recipient) == true else { continue }
            let message = try String(contentsOfFile: base + ".eml", encoding: .utf8)
            return Delivery(envelope: envelope, message: message)
        }
        return nil
    }
}

@Suite("SMTP client against a real SMTP server", .enabled(if: TestSMTPServer.available))
struct SMTPClientTests {
    let smtp = try! #require(TestSMTPServer.configured, "the test script starts the SMTP server (TEST_SMTP_PORT)")

    /// The whole suite runs side by side on a couple of cores, where a conversation may wait its turn longer than
    /// the 30 s a real server is given; these tests check what is said, and the time limit has a test of its own.
    func mailer(_ server: SMTPServer) -> SMTPMailer {
        var client = SMTPClient(
            server: server, group: MultiThreadedEventLoopGroup.singleton, localName: "interlude.test")
        client.timeout = .seconds(600)
        return SMTPMailer(client: client, from: "Interlude Praxis <noreply@interlude.test>")
    }

    @Test("STARTTLS and AUTH PLAIN deliver a two-part message with the links intact")
    func plain() async throws {
        // setup
        let recipient = "plain-\(UUID().uuidString.prefix(8))@example.org"
        let message = EmailMessage(
            to: recipient, subject: "Bitte bestätigen Sie Ihre E-Mail-Adresse",
            text: "Hallo,\n.a line starting with a dot\nhttps://interlude.test/app/verify?token=abc",
            html: "<p>Hallo</p><a href=\"https://interlude.test/app/verify?token=abc\">Bestätigen</a>")

        // act
        try await mailer(smtp.server(port: smtp.port)).send(message)

        // verify
        let delivery = try #require(try smtp.delivery(to: recipient))
        #expect(delivery.envelope["mechanism"] as? String == "PLAIN")
        #expect(delivery.envelope["tls"] as? Bool == true)
        #expect(delivery.envelope["mailFrom"] as? String == "noreply@interlude.test")
        #expect(delivery.message.contains("Subject: =?UTF-8?B?"))
        #expect(delivery.message.contains("multipart/alternative"))
        let parts = ParsedMessage(delivery.message)
        #expect(parts.text.contains(".a line starting with a dot"))
        #expect(parts.text.contains("https://interlude.test/app/verify?token=abc"))
        #expect(parts.html.contains("Bestätigen"))
    }

    @Test("a server that offers only AUTH LOGIN gets LOGIN")
    func login() async throws {
        // setup
        let recipient = "login-\(UUID().uuidString.prefix(8))@example.org"

        // act
        try await mailer(smtp.server(port: smtp.loginOnlyPort))
            .send(EmailMessage(to: recipient, subject: "Test", text: "Hello", html: "<p>Hello</p>"))

        // verify
        let delivery = try #require(try smtp.delivery(to: recipient))
        #expect(delivery.envelope["mechanism"] as? String == "LOGIN")
    }

    @Test("a wrong password is refused permanently and nothing is delivered")
    func wrongPassword() async throws {
        // setup
        let recipient = "refused-\(UUID().uuidString.prefix(8))@example.org"

        // act / verify
        await #expect {
            try await mailer(smtp.server(port: smtp.port, password: "wrong"))
                .send(EmailMessage(to: recipient, subject: "Test", text: "Hello", html: "<p>Hello</p>"))
        } throws: { error in
            guard let smtpError = error as? SMTPError, case .unexpectedReply(_, let code, _) = smtpError else {
                return false
            }
            return code == 535 && !smtpError.isTemporary
        }
        #expect(try smtp.delivery(to: recipient) == nil)
    }

    @Test("a certificate the client does not trust stops the conversation before any credentials are sent")
    func untrustedCertificate() async throws {
        // setup
        let recipient = "untrusted-\(UUID().uuidString.prefix(8))@example.org"

        // act / verify
        await #expect(throws: (any Error).self) {
            try await mailer(smtp.server(port: smtp.port, trusted: false))
                .send(EmailMessage(to: recipient, subject: "Test", text: "Hello", html: "<p>Hello</p>"))
        }
        #expect(try smtp.delivery(to: recipient) == nil)
    }

    @Test("a server that accepts the connection and never answers is given up on in time, to be tried again")
    func silentServer() async throws {
        // setup
        let silent = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .bind(host: "127.0.0.1", port: 0).get()
        let port = try #require(silent.localAddress?.port)
        var client = SMTPClient(
            server: smtp.server(port: port), group: MultiThreadedEventLoopGroup.singleton, localName: "interlude.test")
        client.timeout = .milliseconds(300)

        // act / verify
        await #expect(throws: SMTPError.timedOut) {
            try await client.send(
                rendered: "Subject: Test\r\n\r\nHello", from: "a@interlude.test", to: ["b@example.org"])
        }
        #expect(SMTPError.timedOut.isTemporary)
        try await silent.close()
    }

    @Test("the emails of a registration reach the SMTP server in the recipient's language")
    func registrationThroughSMTP() async throws {
        // setup
        let recipient = "ada-\(UUID().uuidString.prefix(8).lowercased())@example.org"

        // act
        try await withTestApp(mailer: mailer(smtp.server(port: smtp.port))) { app in
            let reply = try await app.api.send(
                .POST, "/accounts", json: AccountAPITests.registration(["email": .string(recipient)]))
            #expect(reply.status == .created)
        }

        // verify
        let delivery = try #require(try smtp.delivery(to: recipient))
        let parts = ParsedMessage(delivery.message)
        #expect(parts.text.contains("https://interlude.test/app/verify?token="))
        #expect(parts.text.contains("Guten Tag"))
    }

    @Test(
        "a therapist's invitation reaches the client through the SMTP server, and its link makes them the therapist's client"
    )
    func invitationThroughSMTP() async throws {
        // setup
        let recipient = "invited-\(UUID().uuidString.prefix(8).lowercased())@example.org"

        try await withTestApp(mailer: mailer(smtp.server(port: smtp.port))) { app in
            let (therapist, _) = try await app.staff("therapist", "tess@example.org", name: "Dr. Tess Berger")

            // act
            let sent = try await therapist.send(
                .POST, "/patients/invitations", json: ["email": .string(recipient), "locale": "en"])
            let delivery = try #require(try smtp.delivery(to: recipient))
            let text = ParsedMessage(delivery.message).text
            let token = try #require(
                text.components(separatedBy: "/app/invitation?token=").dropFirst().first?.prefix { !$0.isWhitespace })
            let accepted = try await app.api.send(
                .POST, "/invitations/acceptance", json: InvitationTests.acceptance(String(token)))
            let paired = try await app.api.authorized(accepted.body["token"].string).send(.GET, "/me/therapist")

            // verify
            #expect(sent.status == .created)
            #expect(text.contains("Dr. Tess Berger") && text.contains("https://interlude.test/app/invitation?token="))
            #expect(accepted.status == .created, "\(accepted.text)")
            #expect(paired.status == .ok)
        }
    }
}

/// The text and HTML parts of a message as `MIMEMessage` renders it.
struct ParsedMessage {
    var text = ""
    var html = ""

    init(_ raw: String) {
        let normalised = raw.replacingOccurrences(of: "\r\n", with: "\n")
        for part in normalised.components(separatedBy: "\n--") {
            guard let split = part.range(of: "\n\n") else { continue }
            let headers = part[..<split.lowerBound].lowercased()
            let body = part[split.upperBound...].split(separator: "\n").joined()
            guard let data = Data(base64Encoded: String(body)), let decoded = String(data: data, encoding: .utf8) else {
                continue
            }
            if headers.contains("text/plain") { text = decoded }
            if headers.contains("text/html") { html = decoded }
        }
    }
}
