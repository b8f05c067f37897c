import Fluent
import Foundation
import InterludeCore
import Vapor

/// `interlude doctor [--mail-test address]`: checks the configuration and the machine and says what to fix; fails
/// when something must be fixed.
struct DoctorCommand: AsyncCommand {
    struct Signature: CommandSignature {
        @Option(name: "mail-test", help: "Also send a test message to this address.")
        var mailTest: String?
    }

    var help: String { "Checks the configuration and the machine, and says what to fix." }

    func run(using context: CommandContext, signature: Signature) async throws {
        let app = context.application
        let settings = app.interlude.settings
        var findings = DoctorRules.publicAddress(settings.publicURL, trustedProxies: settings.trustedProxies)
        findings.append(
            DoctorRules.privateFile(
                "Data folder", path: settings.dataDirectory, mode: DoctorFiles.mode(of: settings.dataDirectory),
                folder: true))
        if settings.dataKey != nil {
            findings.append(
                Finding(
                    level: .ok, subject: "Data key",
                    message: "from INTERLUDE_DATA_KEY; keep a copy apart from the backups"))
        } else {
            let path = settings.dataDirectory + "/data.key"
            var finding = DoctorRules.privateFile("Data key", path: path, mode: DoctorFiles.mode(of: path))
            if finding.level == .ok {
                finding.message += "; keep a copy apart from the backups: without it no text can be read"
            }
            findings.append(finding)
        }
        findings += await mail(app, settings: settings, testAddress: signature.mailTest)
        findings += push(settings)
        findings += await database(app, settings: settings)
        if let available = DoctorFiles.availableBytes(at: settings.dataDirectory) {
            findings.append(DoctorRules.disk(available: available, path: settings.dataDirectory))
        }
        context.console.print("Interlude \(InterludeVersion.current): doctor")
        for finding in findings { context.console.print(finding.line) }
        let toFix = findings.filter { $0.level == .fix }.count
        guard toFix == 0 else {
            throw CommandFailure(message: "\(toFix) to fix before people's data is trusted to this installation")
        }
        context.console.print("Nothing must be fixed.")
    }

    private func mail(_ app: Application, settings: Settings, testAddress: String?) async -> [Finding] {
        switch settings.mail {
        case .outbox(let folder):
            return [
                Finding(
                    level: .warn, subject: "Mail", message: "written to \(folder)/, not sent; set SMTP_URL to send it")
            ]
        case .smtp(let server):
            let client = SMTPClient(
                server: server, group: app.eventLoopGroup,
                localName: URL(string: settings.publicURL)?.host ?? "localhost")
            do {
                try await client.verify()
            } catch {
                return [
                    Finding(
                        level: .fix, subject: "Mail",
                        message: "\(server.host):\(server.port) refused or unreachable: \(error)")
                ]
            }
            var findings = [
                Finding(
                    level: .ok, subject: "Mail",
                    message: "\(server.host):\(server.port) reachable\(server.username == nil ? "" : ", signed in")")
            ]
            if let testAddress {
                do {
                    let text = "This message tests the mail settings of Interlude at \(settings.publicURL)."
                    try await SMTPMailer(client: client, from: settings.mailFrom, clock: app.interlude.clock).send(
                        EmailMessage(
                            to: testAddress, subject: "Interlude: test message", text: text, html: "<p>\(text)</p>"))
                    findings.append(
                        Finding(level: .ok, subject: "Test message", message: "sent; check that it arrived"))
                } catch {
                    findings.append(Finding(level: .fix, subject: "Test message", message: "not sent: \(error)"))
                }
            }
            return findings
        }
    }

    private func push(_ settings: Settings) -> [Finding] {
        var findings: [Finding] = []
        if settings.push.vapidPrivateKey != nil {
            findings.append(Finding(level: .ok, subject: "Web Push", message: "key from WEBPUSH_VAPID_PRIVATE_KEY"))
        } else {
            let path = settings.dataDirectory + "/vapid.key"
            findings.append(DoctorRules.privateFile("Web Push key", path: path, mode: DoctorFiles.mode(of: path)))
        }
        if settings.push.subject == nil {
            findings.append(
                Finding(
                    level: .warn, subject: "Web Push",
                    message: "set WEBPUSH_SUBJECT (mailto: or https:) so push services can reach you"))
        }
        if let apns = settings.push.apns {
            findings.append(
                FileManager.default.isReadableFile(atPath: apns.keyFile)
                    ? Finding(level: .ok, subject: "APNs", message: "key \(apns.keyID) for \(apns.topic)")
                    : Finding(level: .fix, subject: "APNs", message: "\(apns.keyFile) cannot be read"))
        } else {
            findings.append(
                Finding(
                    level: .warn, subject: "APNs", message: "not set: native iOS apps get no push (the web app does)"))
        }
        return findings
    }

    private func database(_ app: Application, settings: Settings) async -> [Finding] {
        do {
            try await app.migrator.setupIfNeeded().get()
            var findings = [DoctorRules.migrations(pending: try await app.migrator.previewPrepareBatch().get().count)]
            if case .postgres = settings.database {
                if let serverNow = try await Statements.postgresClock(on: app.db) {
                    findings.append(
                        DoctorRules.clock(offset: app.interlude.clock.now.timeIntervalSince1970 - serverNow))
                }
            } else {
                findings.append(
                    Finding(
                        level: .ok, subject: "Clock",
                        message: "the embedded database keeps this machine's time; keep it synchronised with NTP"))
            }
            return findings
        } catch {
            return [Finding(level: .fix, subject: "Database", message: "not reachable: \(String(describing: error))")]
        }
    }
}
