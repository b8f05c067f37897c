import Foundation
import Vapor

/// `interlude backup --out FILE`: a consistent copy of the embedded database taken while the server runs. For
/// PostgreSQL it names the `pg_dump` to use for the server's version.
struct BackupCommand: AsyncCommand {
    struct Signature: CommandSignature {
        @Option(name: "out", help: "The file to write; it must not exist yet.")
        var out: String?
    }

    var help: String { "Writes a consistent copy of the database while the server runs." }

    func run(using context: CommandContext, signature: Signature) async throws {
        let app = context.application
        guard let out = signature.out, !out.isEmpty else {
            throw CommandFailure(message: "Name the file to write with --out <file>.")
        }
        do {
            let size = try await DatabaseBackup(database: app.db, settings: app.interlude.settings).write(to: out)
            context.console.print(
                "Wrote \(out) (\(size / 1024) KiB). Keep it with the data directory's data.key (or INTERLUDE_DATA_KEY): "
                    + "without the key the sealed answers and notes in it cannot be read.")
        } catch let failure as DatabaseBackup.Failure {
            throw CommandFailure(message: failure.description)
        }
    }
}
