import Foundation
import Vapor

/// `interlude erasures list --since <date> [--out FILE]` prints the keyed hashes of every id erased since then,
/// what to purge from a backup restored later; `interlude erasures apply [--from FILE]` erases them again in this
/// database (after a restore), from such a list or from the database's own tombstones.
struct ErasuresCommand: AsyncCommand {
    struct Signature: CommandSignature {
        @Argument(name: "action", help: "list or apply")
        var action: String

        @Option(name: "since", help: "list: erasures from this day or instant on (2026-03-01 or 2026-03-01T00:00:00Z).")
        var since: String?

        @Option(name: "out", help: "list: write to this file instead of the terminal.")
        var out: String?

        @Option(name: "from", help: "apply: a file `erasures list` wrote (default: this database's own tombstones).")
        var from: String?
    }

    var help: String { "Lists erased ids as keyed hashes, or applies erasure again to a restored database." }

    func run(using context: CommandContext, signature: Signature) async throws {
        let app = context.application
        try await migrate(app)
        let erased = ErasedIDs(database: app.db, services: app.interlude)
        switch signature.action {
        case "list":
            guard let raw = signature.since, let since = Self.date(raw) else {
                throw CommandFailure(
                    message: "Name the start with --since, e.g. --since 2026-03-01 (the day of the backup).")
            }
            let entries = try await erased.list(since: since)
            let text = ([ErasedIDs.Entry.header] + entries.map(\.line)).joined(separator: "\n") + "\n"
            if let out = signature.out {
                guard FileManager.default.createFile(atPath: out, contents: Data(text.utf8)) else {
                    throw CommandFailure(message: "Could not write \(out).")
                }
                context.console.print(
                    "Wrote \(entries.count) erased ids of \(Set(entries.map(\.erasureID)).count) erasures to \(out).")
            } else {
                context.console.output(text.consoleText(), newLine: false)
            }
        case "apply":
            var entries: [ErasedIDs.Entry] = []
            if let from = signature.from {
                guard let data = FileManager.default.contents(atPath: from) else {
                    throw CommandFailure(message: "Could not read \(from).")
                }
                let lines = String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline).filter {
                    !$0.hasPrefix("#")
                }
                entries = lines.compactMap(ErasedIDs.Entry.init(line:))
                guard entries.count == lines.count else {
                    throw CommandFailure(
                        message: "\(from) is not a list written by `interlude erasures list`; nothing was changed.")
                }
            }
            let outcome = try await ErasureReplay(database: app.db, services: app.interlude).apply(entries)
            context.console.print(
                "Applied erasure: \(outcome.tombstonesAdded) tombstones added, \(outcome.accounts) accounts and "
                    + "\(outcome.studyData) study participations erased again, \(outcome.rows) further rows removed.")
        default:
            throw CommandFailure(message: "Use `erasures list --since <date>` or `erasures apply [--from FILE]`.")
        }
    }

    /// A day (taken as its start in UTC) or an instant with its offset.
    static func date(_ raw: String) -> Date? {
        if let instant = try? Date(raw, strategy: .iso8601) { return instant }
        return try? Date(raw + "T00:00:00Z", strategy: .iso8601)
    }
}
