import Fluent
import Foundation
import InterludeCore
import NIOConcurrencyHelpers
import Vapor

/// `interlude export --study <id> --out study.zip [--since <instant>] [--as <email>]`: the package the API
/// offers, written by this process, recorded in the study's export history and audit log as asked for by `--as`
/// (by default the study's owner).
struct ExportCommand: AsyncCommand {
    struct Signature: CommandSignature {
        @Option(name: "study", help: "The study's id.")
        var study: String?

        @Option(name: "out", help: "Where to write the zip.")
        var out: String?

        @Option(name: "since", help: "Only what changed after this instant (ISO 8601, e.g. 2026-03-01T00:00:00Z).")
        var since: String?

        @Option(name: "as", help: "The email of the team member the export is made for (default: the study's owner).")
        var requester: String?
    }

    var help: String { "Writes a study's research export (the same zip as the API) to a file." }

    func run(using context: CommandContext, signature: Signature) async throws {
        let app = context.application
        try await migrate(app)
        guard let studyID = signature.study.flatMap(UUID.init(uuidString:)) else {
            throw CommandFailure(message: "Name the study with --study <id> (its id, as in the console's address).")
        }
        guard let out = signature.out, !out.isEmpty else {
            throw CommandFailure(message: "Name the zip to write with --out <file>.")
        }
        var since: Date?
        if let raw = signature.since {
            guard let parsed = ISO8601DateFormatter().date(from: raw) else {
                throw CommandFailure(message: "--since needs an instant with its offset, e.g. 2026-03-01T00:00:00Z.")
            }
            since = parsed
        }
        guard let study = try await StudyRecord.find(studyID, on: app.db) else {
            throw CommandFailure(message: "No study has this id.")
        }
        let requester: UserRecord?
        if let email = signature.requester {
            requester = try await UserRecord.query(on: app.db).filter(\.$email == email.lowercased()).first()
        } else {
            requester = try await UserRecord.find(study.$owner.id, on: app.db)
        }
        guard let requester else { throw CommandFailure(message: "No account has this email.") }

        let service = ExportService(database: app.db, services: app.interlude)
        let grant: StudyGrant
        do {
            grant = try await StudyAccess(database: app.db, services: app.interlude).require(
                .exportData, in: studyID, by: requester)
        } catch {
            throw CommandFailure(
                message: "\(requester.email) may not export this study; name a team member who may with --as.")
        }
        let export = try await service.start(try StudyExportScope(grant, database: app.db), since: since)
        let bar = ProgressBar(console: context.console)
        let finished = try await service.write(try export.requireID()) { bar.show($0) }
        bar.show(100)
        guard finished.status == .ready else {
            throw CommandFailure(message: "The export failed: \(finished.error ?? "no reason given").")
        }
        let destination = URL(fileURLWithPath: out)
        guard let stored = try await app.interlude.files(on: app.db).read(.export(try export.requireID())),
            FileManager.default.createFile(atPath: destination.path, contents: nil)
        else { throw CommandFailure(message: "The export could not be written to \(out).") }
        let handle = try FileHandle(forWritingTo: destination)
        defer { try? handle.close() }
        for try await chunk in stored.chunks { try handle.write(contentsOf: chunk) }
        context.console.print(
            "\nWrote \(out): \(finished.participants) participants, \(finished.prompts) prompts, \(finished.responses) responses."
        )
    }
}

/// A progress bar on a terminal; elsewhere (a log, a pipe) a line at every tenth.
final class ProgressBar: Sendable {
    private let console: any Console
    private let last = NIOLockedValueBox(-1)
    private let terminal = isatty(STDOUT_FILENO) == 1

    init(console: any Console) {
        self.console = console
    }

    func show(_ percent: Int) {
        let percent = min(max(percent, 0), 100)
        let step = terminal ? percent : percent / 10 * 10
        guard
            last.withLockedValue({ previous in
                defer { previous = max(previous, step) }
                return step > previous
            })
        else { return }
        if terminal {
            let filled = percent * 30 / 100
            console.output(
                "\r[\(String(repeating: "#", count: filled))\(String(repeating: " ", count: 30 - filled))] \(percent) %"
                    .consoleText(),
                newLine: false)
        } else {
            console.print("\(step) %")
        }
    }
}
