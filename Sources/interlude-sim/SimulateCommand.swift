import ArgumentParser
import Foundation
import InterludeKit
import InterludeSimulator

/// Simulates participants of a study or clients of a practice against a running Interlude server, in real time, through
/// InterludeKit: for demos, for load, and as an example of the SDK in use.
@main
struct SimulateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "interlude-sim",
        abstract: "Simulates participants using a native app built on InterludeKit against a running Interlude server.")

    @Option(help: "The server's address.") var server = "http://127.0.0.1:8080"
    @Option(help: "How many participants.") var participants = 10
    @Option(help: "How long to simulate, in minutes of real time.") var minutes = 10.0
    @Option(help: "Seconds between two looks at each phone.") var step = 30.0
    @Option(help: "Seed for the participants' choices; the same seed repeats a run.") var seed: UInt64 = 1
    @Option(help: "Share of prompts answered (0–1).") var answerRate = 0.8
    @Option(help: "The longest wait before answering an open prompt, in minutes.") var answerWithin = 2.0
    @Option(help: "Chance per hour of losing the connection (0–1).") var offlineRate = 0.08
    @Option(help: "Join this study (its id) …") var study: String?
    @Option(help: "… accepting this consent version.") var consentVersion: String?
    @Option(help: "Or pair with a therapist: a file with one pairing code per line.") var pairingCodes: String?
    @Option(help: "Register new accounts under this email domain …") var registerDomain: String?
    @Option(help: "… finding verification links in the server's mail outbox folder (data/outbox).") var mailOutbox:
        String?
    @Option(help: "Or sign in: a file with one 'email password' per line.") var accounts: String?
    @Option(help: "The password for new accounts.") var password = "simulated participant 1"
    @Flag(help: "Send each participant's own X-Forwarded-For (for a server with TRUST_PROXY).") var distinctAddresses =
        false

    func validate() throws {
        guard participants > 0, participants <= 10_000 else {
            throw ValidationError("--participants must be 1 to 10000")
        }
        guard (0.01...43_200).contains(minutes) else {
            throw ValidationError("--minutes must be 0.01 to 43200 (30 days)")
        }
        guard (0.1...86_400).contains(step) else { throw ValidationError("--step must be 0.1 to 86400 seconds") }
        guard (0...1_440).contains(answerWithin) else {
            throw ValidationError("--answer-within must be 0 to 1440 minutes")
        }
        guard (0...1).contains(answerRate), (0...1).contains(offlineRate) else {
            throw ValidationError("rates are 0 to 1")
        }
        guard URL(string: server)?.host != nil else { throw ValidationError("--server is not an address") }
        guard (registerDomain == nil) != (accounts == nil) else {
            throw ValidationError("give either --register-domain or --accounts")
        }
        if registerDomain != nil, mailOutbox == nil { throw ValidationError("--register-domain needs --mail-outbox") }
        if study != nil, consentVersion == nil { throw ValidationError("--study needs --consent-version") }
        if study != nil, pairingCodes != nil { throw ValidationError("give either --study or --pairing-codes") }
        if let study, UUID(uuidString: study) == nil { throw ValidationError("--study is not an id") }
    }

    func run() async throws {
        let accountSource: Simulation.Accounts
        if let registerDomain, let mailOutbox {
            accountSource = .register(
                prefix: "sim-\(seed)", domain: registerDomain, password: password,
                verificationToken: {
                    try await Outbox(directory: URL(fileURLWithPath: mailOutbox)).verificationToken(for: $0)
                })
        } else {
            accountSource = .existing(
                try lines(accounts!).map {
                    let parts = $0.split(separator: " ", maxSplits: 1).map(String.init)
                    guard parts.count == 2 else { throw ValidationError("each line of --accounts is 'email password'") }
                    return (parts[0], parts[1])
                })
        }
        let enrolment: Simulation.Enrolment =
            if let study, let consentVersion {
                .join(study: UUID(uuidString: study)!, consentVersion: consentVersion, modules: [:])
            } else if let pairingCodes {
                .pair(codes: try lines(pairingCodes))
            } else {
                .none
            }
        var configuration = Simulation.Configuration(
            serverURL: URL(string: server)!, participants: participants, duration: minutes * 60, step: step, seed: seed,
            accounts: accountSource, enrolment: enrolment)
        configuration.answerRate = answerRate
        configuration.answerWithin = answerWithin * 60
        configuration.offlineRate = offlineRate
        configuration.distinctAddresses = distinctAddresses
        configuration.syncInterval = max(step * 4, 60)
        let tally = try await Simulation(configuration).run(clock: WallSimulationClock()) { print($0) }
        print("participant\tanswered\tmissed\trefused\tthoughts\tsamples\toffline\tsyncs")
        for row in tally.participants {
            print(
                [
                    row.email, "\(row.answered)", "\(row.missed)", "\(row.refused)", "\(row.thoughts)",
                    "\(row.samples)",
                    "\(row.offlinePeriods)", "\(row.syncs)",
                ].joined(separator: "\t"))
        }
    }

    private func lines(_ path: String) throws -> [String] {
        try String(contentsOfFile: path, encoding: .utf8).split(whereSeparator: \.isNewline)
            .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }
}

/// The `.eml` files the server writes when mail goes to its outbox folder.
struct Outbox {
    let directory: URL

    /// The token of the newest verification link sent to `address`; waits a little for the file to appear.
    func verificationToken(for address: String) async throws -> String {
        for _ in 0..<50 {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
            for name in names.filter({ $0.hasSuffix(".eml") }).sorted().reversed() {
                let message = try String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8)
                guard message.contains("\r\nTo: \(address)\r\n") || message.hasPrefix("To: \(address)\r\n") else {
                    continue
                }
                for text in Self.base64Parts(message) {
                    if let range = text.range(of: "/app/verify?token=") {
                        return String(
                            text[range.upperBound...].prefix { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" })
                    }
                }
            }
            try await Task.sleep(for: .milliseconds(200))
        }
        throw ValidationError("no verification email to \(address) in \(directory.path)")
    }

    /// The decoded base64 parts of a MIME message.
    static func base64Parts(_ message: String) -> [String] {
        var parts: [String] = []
        var collecting: String?
        var inBody = false
        for line in message.components(separatedBy: "\r\n") {
            if line.lowercased() == "content-transfer-encoding: base64" {
                collecting = ""
                inBody = false
            } else if collecting != nil, !inBody, line.isEmpty {
                inBody = true
            } else if inBody, line.isEmpty || line.hasPrefix("--") {
                if let encoded = collecting, let data = Data(base64Encoded: encoded) {
                    parts.append(String(decoding: data, as: UTF8.self))
                }
                collecting = nil
                inBody = false
            } else if inBody {
                collecting? += line
            }
        }
        return parts
    }
}
