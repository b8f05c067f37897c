import Foundation
import NIOCore
import NIOPosix
import NIOSSL

/// Where and how to reach an SMTP server, parsed from `SMTP_URL`:
/// `smtp://user:pass@host:587` (STARTTLS required), `smtps://user:pass@host:465` (TLS from the start),
/// `smtp://host:25?tls=off` (plain, for a relay on a trusted network).
public struct SMTPServer: Sendable, Equatable {
    public enum Security: Sendable, Equatable {
        case startTLS
        case implicitTLS
        case none
    }

    public var host: String
    public var port: Int
    public var security: Security
    public var username: String?
    public var password: String?
    /// A PEM file with extra certificates to trust, for a server with a private certificate authority.
    public var caFile: String?

    public init(
        host: String, port: Int, security: Security, username: String? = nil, password: String? = nil,
        caFile: String? = nil
    ) {
        self.host = host
        self.port = port
        self.security = security
        self.username = username
        self.password = password
        self.caFile = caFile
    }

    public init(url: String, caFile: String? = nil) throws {
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased(),
            let host = components.host, !host.isEmpty
        else { throw SMTPError.invalidConfiguration("SMTP_URL must look like smtp://user:password@host:587") }
        let tlsOff = components.queryItems?.contains { $0.name == "tls" && $0.value == "off" } ?? false
        switch scheme {
        case "smtp":
            security = tlsOff ? .none : .startTLS
            port = components.port ?? 587
        case "smtps":
            security = .implicitTLS
            port = components.port ?? 465
        default:
            throw SMTPError.invalidConfiguration("SMTP_URL must start with smtp:// or smtps://")
        }
        self.host = host
        username = components.user?.removingPercentEncoding ?? components.user
        password = components.password?.removingPercentEncoding ?? components.password
        self.caFile = caFile
    }
}

public enum SMTPError: Error, CustomStringConvertible, Equatable {
    case invalidConfiguration(String)
    case unexpectedReply(command: String, code: Int, text: String)
    case startTLSNotOffered
    case noSupportedAuthMechanism
    case connectionClosed
    case timedOut

    public var description: String {
        switch self {
        case .invalidConfiguration(let message): return message
        case .unexpectedReply(let command, let code, let text):
            // The reply's own words often repeat the recipient's address; only the enhanced status code is kept.
            let enhanced = text.split(separator: " ").first.flatMap { word in
                word.split(separator: ".").count == 3 && word.allSatisfy({ $0.isNumber || $0 == "." })
                    ? " \(word)" : nil
            }
            return "SMTP server answered \(command) with \(code)\(enhanced ?? "")"
        case .startTLSNotOffered: return "SMTP server does not offer STARTTLS"
        case .noSupportedAuthMechanism: return "SMTP server offers neither AUTH PLAIN nor AUTH LOGIN"
        case .connectionClosed: return "SMTP server closed the connection"
        case .timedOut: return "SMTP server did not answer in time"
        }
    }

    /// Whether trying again later may succeed (a 4xx reply or a network problem), as opposed to a permanent refusal.
    public var isTemporary: Bool {
        switch self {
        case .unexpectedReply(_, let code, _): return (400..<500).contains(code)
        case .connectionClosed, .timedOut: return true
        default: return false
        }
    }
}

/// One reply of the server: a code and its text lines.
struct SMTPReply: Equatable {
    var code: Int
    var lines: [String]
}

/// A small SMTP client on SwiftNIO: EHLO, STARTTLS or implicit TLS, AUTH PLAIN or LOGIN, one message per connection.
struct SMTPClient: Sendable {
    let server: SMTPServer
    let group: any EventLoopGroup
    /// The name announced in EHLO.
    let localName: String
    var timeout: Duration = .seconds(30)

    /// A message to deliver: what `MIMEMessage.render` made, from whom, to whom.
    struct Envelope: Sendable {
        let message: String
        let sender: String
        let recipients: [String]
    }

    /// Sends an already rendered message (`MIMEMessage.render`) from `sender` to `recipients`.
    func send(rendered message: String, from sender: String, to recipients: [String]) async throws {
        try await converse(within: timeout, Envelope(message: message, sender: sender, recipients: recipients))
    }

    /// Connects, greets, starts TLS and signs in as a delivery does, then leaves without sending anything.
    func verify() async throws {
        try await converse(within: timeout, nil)
    }

    private func converse(within timeout: Duration, _ envelope: Envelope?) async throws {
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await self.converse(envelope) }
            tasks.addTask {
                try await Task.sleep(for: timeout)
                throw SMTPError.timedOut
            }
            defer { tasks.cancelAll() }
            try await tasks.next()
        }
    }

    private func makeTLSContext() throws -> NIOSSLContext {
        var configuration = TLSConfiguration.makeClientConfiguration()
        if let caFile = server.caFile {
            configuration.additionalTrustRoots = [.file(caFile)]
        }
        return try NIOSSLContext(configuration: configuration)
    }

    private static func makeTLSHandler(context: NIOSSLContext, host: String) throws -> NIOSSLClientHandler {
        let hostname = host.first?.isNumber == true || host.contains(":") ? nil : host
        return try NIOSSLClientHandler(context: context, serverHostname: hostname)
    }

    private func converse(_ envelope: Envelope?) async throws {
        let tlsContext = server.security == .none ? nil : try makeTLSContext()
        let implicitTLS = server.security == .implicitTLS
        let host = server.host
        let channel = try await ClientBootstrap(group: group)
            .connectTimeout(.seconds(10))
            .connect(host: server.host, port: server.port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    if implicitTLS, let tlsContext {
                        try channel.pipeline.syncOperations.addHandler(
                            try Self.makeTLSHandler(context: tlsContext, host: host))
                    }
                    try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(SMTPLineDecoder()))
                    return try NIOAsyncChannel<String, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
        try await channel.executeThenClose { inbound, outbound in
            var replies = inbound.makeAsyncIterator()
            func readReply() async throws -> SMTPReply {
                var lines: [String] = []
                while let line = try await replies.next() {
                    guard line.count >= 3, let code = Int(line.prefix(3)) else {
                        throw SMTPError.unexpectedReply(command: "(reply)", code: 0, text: line)
                    }
                    lines.append(String(line.dropFirst(4)))
                    if line.count == 3 || line[line.index(line.startIndex, offsetBy: 3)] == " " {
                        return SMTPReply(code: code, lines: lines)
                    }
                }
                throw SMTPError.connectionClosed
            }
            func command(_ text: String, expect: ClosedRange<Int>, label: String? = nil) async throws -> SMTPReply {
                try await outbound.write(ByteBuffer(string: text + "\r\n"))
                let reply = try await readReply()
                guard expect.contains(reply.code) else {
                    throw SMTPError.unexpectedReply(
                        command: label ?? String(text.prefix(4)), code: reply.code,
                        text: reply.lines.joined(separator: " "))
                }
                return reply
            }

            let greeting = try await readReply()
            guard greeting.code == 220 else {
                throw SMTPError.unexpectedReply(command: "greeting", code: greeting.code, text: greeting.lines.joined())
            }
            var capabilities = try await command("EHLO \(localName)", expect: 250...250).lines
            if server.security == .startTLS {
                guard capabilities.contains(where: { $0.uppercased().hasPrefix("STARTTLS") }) else {
                    throw SMTPError.startTLSNotOffered
                }
                _ = try await command("STARTTLS", expect: 220...220)
                guard let tlsContext else { throw SMTPError.startTLSNotOffered }
                try await channel.channel.pipeline.addHandler(
                    try Self.makeTLSHandler(context: tlsContext, host: host), position: .first)
                capabilities = try await command("EHLO \(localName)", expect: 250...250).lines
            }
            if let username = server.username {
                let password = server.password ?? ""
                let mechanisms = Set(
                    capabilities
                        .filter { $0.uppercased().hasPrefix("AUTH") }
                        .flatMap { $0.uppercased().dropFirst(5).split(separator: " ").map(String.init) })
                if mechanisms.contains("PLAIN") {
                    let token = Data("\0\(username)\0\(password)".utf8).base64EncodedString()
                    _ = try await command("AUTH PLAIN \(token)", expect: 235...235, label: "AUTH PLAIN")
                } else if mechanisms.contains("LOGIN") {
                    _ = try await command("AUTH LOGIN", expect: 334...334)
                    _ = try await command(
                        Data(username.utf8).base64EncodedString(), expect: 334...334, label: "AUTH LOGIN username")
                    _ = try await command(
                        Data(password.utf8).base64EncodedString(), expect: 235...235, label: "AUTH LOGIN password")
                } else {
                    throw SMTPError.noSupportedAuthMechanism
                }
            }
            if let envelope {
                _ = try await command("MAIL FROM:<\(envelope.sender)>", expect: 250...250)
                for recipient in envelope.recipients {
                    _ = try await command("RCPT TO:<\(recipient)>", expect: 250...251)
                }
                _ = try await command("DATA", expect: 354...354)
                _ = try await command(
                    Self.dotStuffed(envelope.message) + "\r\n.", expect: 250...250, label: "DATA body")
            }
            try? await outbound.write(ByteBuffer(string: "QUIT\r\n"))
            _ = try? await readReply()
        }
    }

    /// The message with CRLF line ends and every line that starts with a dot given a second one (RFC 5321 4.5.2).
    static func dotStuffed(_ message: String) -> String {
        let normalised = message.replacingOccurrences(of: "\r\n", with: "\n").replacingOccurrences(of: "\r", with: "\n")
        var lines = normalised.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        if lines.last == "" { lines.removeLast() }
        return lines.map { $0.hasPrefix(".") ? "." + $0 : $0 }.joined(separator: "\r\n")
    }
}

/// Splits the server's byte stream into lines without their CRLF.
struct SMTPLineDecoder: ByteToMessageDecoder {
    typealias InboundOut = String

    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        guard let newline = buffer.readableBytesView.firstIndex(of: UInt8(ascii: "\n")) else { return .needMoreData }
        let length = newline - buffer.readerIndex + 1
        guard var line = buffer.readString(length: length) else { return .needMoreData }
        while let last = line.last, last == "\n" || last == "\r" || last == "\r\n" { line.removeLast() }
        context.fireChannelRead(wrapInboundOut(line))
        return .continue
    }
}

/// Delivers each message through `SMTPClient`.
struct SMTPMailer: Mailer {
    let client: SMTPClient
    let from: String
    var clock = WallClock.system

    func send(_ message: EmailMessage) async throws {
        let rendered = MIMEMessage.render(message, from: from, date: clock.now)
        try await client.send(rendered: rendered, from: MIMEMessage.address(of: from), to: [message.to])
    }
}
