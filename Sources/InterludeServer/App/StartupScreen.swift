import Foundation

/// What `serve` prints once it is ready: a box of labelled lines a person can read at a glance.
struct StartupScreen {
    var title: String
    var rows: [(label: String, value: String)]
    var notes: [String] = []

    /// The box, each line padded to the widest, with notes below it.
    var text: String {
        let labelWidth = rows.map(\.label.count).max() ?? 0
        let lines =
            [title, ""]
            + rows.map { $0.label.padding(toLength: labelWidth, withPad: " ", startingAt: 0) + "  " + $0.value }
        let width = lines.map(\.count).max() ?? 0
        let rule = "+" + String(repeating: "-", count: width + 2) + "+"
        let boxed = lines.map { "| " + $0.padding(toLength: width, withPad: " ", startingAt: 0) + " |" }
        return ([rule] + boxed + [rule] + notes).joined(separator: "\n")
    }

    /// Where the database is, without a password.
    static func describe(_ database: Settings.Database) -> String {
        switch database {
        case .sqliteFile(let path): return "SQLite, \(path)"
        case .postgres(let url, let schema):
            let components = URLComponents(string: url)
            let place = "\(components?.host ?? "?")\(components?.port.map { ":\($0)" } ?? "")\(components?.path ?? "")"
            return "PostgreSQL, \(place)" + (schema.map { " (schema \($0))" } ?? "")
        }
    }

    /// Where email goes.
    static func describe(_ mail: Settings.Mail) -> String {
        switch mail {
        case .outbox(let folder): return "written to \(folder)/ (no SMTP server set)"
        case .smtp(let server): return "SMTP \(server.host):\(server.port)"
        }
    }
}
