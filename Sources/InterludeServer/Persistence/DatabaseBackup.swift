import Fluent
import Foundation
import SQLKit

/// A consistent copy of the embedded database, taken while the server runs: SQLite's `VACUUM INTO` writes a
/// new file from one read transaction. PostgreSQL is backed up with its own `pg_dump`.
struct DatabaseBackup: Sendable {
    let database: any Database
    let settings: Settings

    enum Failure: Error, CustomStringConvertible {
        case exists(String)
        case postgres(version: String)

        var description: String {
            switch self {
            case .exists(let path): return "\(path) exists already; choose a new name so no backup is overwritten."
            case .postgres(let version):
                let major = version.split(whereSeparator: { !$0.isNumber }).first.map(String.init) ?? version
                return "The database is PostgreSQL \(version): back it up with pg_dump of version \(major) or newer, "
                    + "e.g. pg_dump --format=custom --file=interlude.dump \"$DATABASE_URL\". Restore with pg_restore, "
                    + "then run `interlude erasures apply --from <list>` (see docs/features/backups-and-erasure.md)."
            }
        }
    }

    /// Writes the copy to `path`, which must not exist; its size in bytes.
    func write(to path: String) async throws -> Int {
        let sql = Statements.sql(database)
        switch settings.database {
        case .sqliteFile:
            guard !FileManager.default.fileExists(atPath: path) else { throw Failure.exists(path) }
            let target = URL(fileURLWithPath: path).standardizedFileURL.path.replacingOccurrences(of: "'", with: "''")
            try await sql.raw("VACUUM INTO '\(unsafeRaw: target)'").run()
            return (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
        case .postgres:
            let version = try await sql.raw("SHOW server_version").first()?.decode(
                column: "server_version", as: String.self)
            throw Failure.postgres(version: version ?? "of unknown version")
        }
    }
}
