import Testing

@testable import InterludeServer

@Suite("The start-up screen")
struct StartupScreenTests {
    @Test("one box, every line as wide, labels aligned, notes below")
    func box() {
        let screen = StartupScreen(
            title: "Interlude 0.2.0 is ready",
            rows: [("Console", "http://localhost:8080/console"), ("Database", "SQLite, ./data/interlude.sqlite")],
            notes: ["Delete ./data/first-admin.txt afterwards."])
        let lines = screen.text.split(separator: "\n").map(String.init)
        #expect(lines.first == lines[5] && lines.first?.hasPrefix("+--") == true)
        #expect(Set(lines.prefix(6).map(\.count)).count == 1)
        #expect(lines[3] == "| Console   http://localhost:8080/console   |")
        #expect(lines.last == "Delete ./data/first-admin.txt afterwards.")
    }

    @Test("the database and mail are named without a password")
    func descriptions() {
        let postgres = StartupScreen.describe(
            .postgres(url: "postgres://interlude:s3cret@db.internal:5432/interlude", schema: "clinic"))
        #expect(postgres == "PostgreSQL, db.internal:5432/interlude (schema clinic)")
        #expect(StartupScreen.describe(.sqliteFile("./data/interlude.sqlite")) == "SQLite, ./data/interlude.sqlite")
        #expect(StartupScreen.describe(.outbox("./data/outbox")) == "written to ./data/outbox/ (no SMTP server set)")
    }
}
