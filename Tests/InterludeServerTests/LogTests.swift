import Foundation
import Logging
import NIOConcurrencyHelpers
import Testing
import VaporTesting

@testable import InterludeServer

/// Keeps the events a logger hands it.
private final class RecordingHandler: LogHandler, @unchecked Sendable {
    private let events = NIOLockedValueBox<[LogEvent]>([])
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        events.withLockedValue { $0.append(event) }
    }

    var lines: [String] {
        events.withLockedValue { events in
            events.map { event in
                let fields = (event.metadata ?? [:]).sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
                return ([event.message.description] + fields).joined(separator: " ")
            }
        }
    }
}

@Suite("Logs: no secrets, no forged lines")
struct LogTests {
    @Test("control characters in a message or in metadata are written escaped, so a log line cannot be forged")
    func escaping() throws {
        // setup
        let recorder = RecordingHandler()
        var logger = Logger(label: "test") { _ in SafeLogHandler(wrapping: recorder) }
        logger[metadataKey: "request-id"] = "abc\r\ninfo [codes.vapor.application] GET /admin 200"

        // act
        logger.info("Request failed: key \"a\nb\u{1b}[2J\u{2028}c\"", metadata: ["field": .array(["x\ty", "ok"])])

        // verify
        let line = try #require(recorder.lines.first)
        #expect(!line.contains("\n") && !line.contains("\r") && !line.contains("\u{1b}") && !line.contains("\u{2028}"))
        #expect(line.contains("key \"a\\u{a}b\\u{1b}[2J\\u{2028}c\""))
        #expect(line.contains("request-id=abc\\u{d}\\u{a}info"))
        #expect(!line.contains("\t") && line.contains("u{9}y"))
        #expect(LogText.escaped("plain text, ümlaut") == "plain text, ümlaut")
    }

    @Test("a logged query keeps its SQL but withholds the values bound to it")
    func queryBinds() throws {
        // setup
        let recorder = RecordingHandler()
        let logger = Logger(label: "test") { _ in SafeLogHandler(wrapping: recorder) }

        // act
        logger.debug("Executing query", metadata: ["sql": "SELECT 1 WHERE email = $1", "binds": ["ada@example.org"]])

        // verify
        let query = try #require(recorder.lines.last)
        #expect(
            query.contains("sql=SELECT 1 WHERE email = $1") && query.contains("binds=(withheld)")
                && !query.contains("ada@"))
    }

    @Test(
        "each request is logged once with its route pattern, status and duration; at every level no line names an id, email, token or calendar secret"
    )
    func requestLine() async throws {
        try await withTestApp { app in
            // setup
            let recorder = RecordingHandler()
            app.app.logger = Logger(label: "test") { _ in SafeLogHandler(wrapping: recorder) }
            let patient = try await app.patient("log-\(UUID().uuidString.prefix(6).lowercased())@example.org")
            let feed = try await patient.client.send(.GET, "/me/calendar-feed")
            let url = try #require(feed.body["url"].string)
            let path = try #require(URL(string: url)?.path)
            let secret = try #require(path.split(separator: "/").last.map { String($0.prefix { $0 != "." }) })

            // act
            let answer = try await app.app.testing().sendRequest(
                .GET, path + "?token=not-for-the-log", headers: ["X-Request-Id": "forged\u{1b}id"])
            let missing = try await patient.client.send(.GET, "/patients/\(patient.id)/responses")

            // verify
            #expect(answer.status == .ok)
            #expect(missing.status == .forbidden)

            let lines = recorder.lines
            #expect(
                lines.contains {
                    $0.hasPrefix("GET /calendar/:feed 200 ") && $0.contains(" ms ")
                        && $0.contains("request-id=forged\\u{1b}id")
                })
            #expect(lines.contains { $0.hasPrefix("GET /api/v1/patients/:patientId/responses 403 ") })
            #expect(lines.contains { $0.hasPrefix("POST /api/v1/accounts 201 ") })
            for line in lines {
                #expect(
                    !line.contains(secret) && !line.contains("not-for-the-log") && !line.contains(patient.id.uuidString)
                )
                #expect(!line.contains("@example.org") && !line.contains(TestContext.password))
            }
        }
    }

    @Test("an SMTP refusal is logged with its codes but without the words of the reply, which repeat addresses")
    func smtpRefusal() {
        // setup
        let refusal = SMTPError.unexpectedReply(
            command: "RCPT", code: 550, text: "5.1.1 <ada@example.org>: Recipient address rejected")

        // act / verify
        #expect(refusal.description == "SMTP server answered RCPT with 550 5.1.1")
        #expect(
            SMTPError.unexpectedReply(command: "DATA", code: 451, text: "try later").description
                == "SMTP server answered DATA with 451")
    }
}
