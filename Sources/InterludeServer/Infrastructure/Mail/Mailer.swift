import Foundation
import Logging

/// A message to one recipient, with a plain-text and an HTML body.
public struct EmailMessage: Sendable, Equatable {
    public var to: String
    public var subject: String
    public var text: String
    public var html: String

    public init(to: String, subject: String, text: String, html: String) {
        self.to = to
        self.subject = subject
        self.text = text
        self.html = html
    }
}

/// Delivers email. Implementations: `SMTPMailer` for a real server, `OutboxMailer` writing `.eml` files.
public protocol Mailer: Sendable {
    func send(_ message: EmailMessage) async throws
}

/// Writes each message as an `.eml` file into a folder and logs its subject — the default when no SMTP server
/// is configured, so a newcomer can follow links without setting up mail.
struct OutboxMailer: Mailer {
    let directory: String
    let from: String
    let logger: Logger
    var clock = WallClock.system

    func send(_ message: EmailMessage) async throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let now = clock.now
        let stamp = Int(now.timeIntervalSince1970 * 1000)
        let name = "\(stamp)-\(UUID().lowercasedText).eml"
        let rendered = MIMEMessage.render(message, from: from, date: now)
        let path = directory + "/" + name
        guard FileManager.default.createFile(atPath: path, contents: Data(rendered.utf8)) else {
            throw CocoaError(.fileWriteUnknown)
        }
        logger.info("Email written to outbox", metadata: ["file": .string(name), "subject": .string(message.subject)])
    }
}
