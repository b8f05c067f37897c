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

    @Test("styles go out gzip-compressed to a browser that accepts it, and revalidated; pages and the API are not compressed")
    func compressedAndRevalidated() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("public-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let css = String(repeating: "main { margin: 0 auto; padding: 1rem; }\n", count: 200)
        try Data(css.utf8).write(to: directory.appendingPathComponent("site.css"))
        try Data([0x89, 0x50, 0x4E, 0x47]).write(to: directory.appendingPathComponent("icon.png"))

        let app = try await Application.make(.testing)
        app.http.server.configuration.responseCompression = PublicFilesMiddleware.serverCompression
        app.middleware.use(PublicFilesMiddleware(directory: directory.path + "/"))
        app.get("api", "v1", "note") { _ in String(repeating: "secret ", count: 200) }
        app.get("page") { _ in String(repeating: "secret ", count: 200) }
        try await withListeningApp(app) { base in
            let gzip: HTTPHeaders = ["Accept-Encoding": "gzip"]
            let styles = try await app.client.get(URI(string: "\(base)/site.css"), headers: gzip)
            #expect(styles.status == .ok)
            #expect(styles.headers.first(name: .contentEncoding) == "gzip")
            #expect(styles.headers.first(name: .cacheControl) == "no-cache")
            #expect(styles.headers.first(name: "x-vapor-response-compression") == nil)
            let sent = try #require(styles.body).readableBytes
            #expect(sent < css.utf8.count / 5, "\(sent) bytes for \(css.utf8.count)")

            let plain = try await app.client.get(URI(string: "\(base)/site.css"))
            #expect(plain.headers.first(name: .contentEncoding) == nil)
            #expect(plain.body.map { String(buffer: $0) } == css)
            let etag = try #require(plain.headers.first(name: .eTag))
            let unchanged = try await app.client.get(URI(string: "\(base)/site.css"), headers: ["If-None-Match": etag])
            #expect(unchanged.status == .notModified)

            let image = try await app.client.get(URI(string: "\(base)/icon.png"), headers: gzip)
            #expect(image.headers.first(name: .contentEncoding) == nil)
            for path in ["api/v1/note", "page"] {
                let answer = try await app.client.get(URI(string: "\(base)/\(path)"), headers: gzip)
                #expect(answer.headers.first(name: .contentEncoding) == nil, "\(path)")
                #expect(answer.headers.first(name: .cacheControl) == nil, "\(path)")
            }
        }
    }
}
