import Foundation
import Testing
import Vapor

@testable import InterludeServer

@Suite("Public files")
struct PublicFilesTests {
    @Test("a file of the public directory is served; under /api/ the directory is not asked, a route answers")
    func onlyOutsideTheAPI() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("public-\(UUID().uuidString)")
        try FileManager.default.createDirectory(
            at: directory.appendingPathComponent("api/v1"), withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try Data("plain".utf8).write(to: directory.appendingPathComponent("plain.txt"))
        try Data("shadow".utf8).write(to: directory.appendingPathComponent("api/v1/health"))

        let app = try await Application.make(.testing)
        app.middleware.use(PublicFilesMiddleware(directory: directory.path + "/"))
        app.get("api", "v1", "health") { _ in "route" }
        try await withListeningApp(app) { base in
            let file = try await app.client.get(URI(string: "\(base)/plain.txt"))
            #expect(file.status == .ok)
            #expect(file.body.map { String(buffer: $0) } == "plain")

            let api = try await app.client.get(URI(string: "\(base)/api/v1/health"))
            #expect(api.body.map { String(buffer: $0) } == "route")
            let missing = try await app.client.get(URI(string: "\(base)/api/v1/plain.txt"))
            #expect(missing.status == .notFound)
        }
    }
}
