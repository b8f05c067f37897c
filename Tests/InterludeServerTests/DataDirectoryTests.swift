import Foundation
import Logging
import Testing

@testable import InterludeServer

@Suite("The data directory is the server's alone")
struct DataDirectoryTests {
    func permissions(_ path: String) throws -> Int {
        try #require(FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
    }

    @Test("the directory is 0700 (an existing wider one is narrowed), and the database, keys and outbox files are 0600")
    func ownerOnly() async throws {
        // setup: a directory anyone may read
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("data-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(
            atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await withTestApp(settings: {
            $0.dataDirectory = directory
            $0.database = .sqliteFile(directory + "/interlude.sqlite")
            $0.dataKey = nil
        }) { app in
            // act: the server starts on it, and a mail goes to the outbox
            let outbox = OutboxMailer(
                directory: directory + "/outbox", from: "noreply@interlude.test", logger: Logger(label: "test"))
            try await outbox.send(
                EmailMessage(to: "ada@example.org", subject: "Test", text: "Hello", html: "<p>Hello</p>"))

            // verify
            #expect(try permissions(directory) == 0o700)
            #expect(try permissions(directory + "/interlude.sqlite") == 0o600)
            #expect(try permissions(directory + "/data.key") == 0o600)
            let written = try #require(try FileManager.default.contentsOfDirectory(atPath: directory + "/outbox").first)
            #expect(try permissions(directory + "/outbox") == 0o700)
            #expect(try permissions(directory + "/outbox/" + written) == 0o600)
        }
    }
}
