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
        app.middleware.use(
            PublicFilesMiddleware(directory: directory.path + "/", assets: try PublicAssets(directory: directory.path)))
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

    @Test(
        "styles go out gzip-compressed to a browser that accepts it, and revalidated; pages and the API are not compressed"
    )
    func compressedAndRevalidated() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("public-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let css = String(repeating: "main { margin: 0 auto; padding: 1rem; }\n", count: 200)
        try Data(css.utf8).write(to: directory.appendingPathComponent("site.css"))
        try Data([0x89, 0x50, 0x4E, 0x47]).write(to: directory.appendingPathComponent("icon.png"))

        let app = try await Application.make(.testing)
        app.http.server.configuration.responseCompression = PublicFilesMiddleware.serverCompression
        app.middleware.use(
            PublicFilesMiddleware(directory: directory.path + "/", assets: try PublicAssets(directory: directory.path)))
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

    @Test(
        "under this release's version a file is kept for a year; under another it is revalidated; the version follows the files"
    )
    func versioned() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("public-\(UUID().uuidString)")
        try FileManager.default.createDirectory(
            at: directory.appendingPathComponent("js"), withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try Data("export const one = 1;\n".utf8).write(to: directory.appendingPathComponent("js/app.js"))
        let assets = try PublicAssets(directory: directory.path)

        let app = try await Application.make(.testing)
        app.middleware.use(PublicFilesMiddleware(directory: directory.path + "/", assets: assets))
        try await withListeningApp(app) { base in
            let current = try await app.client.get(URI(string: "\(base)\(assets.prefix)/js/app.js"))
            #expect(current.status == .ok)
            #expect(current.body.map { String(buffer: $0) } == "export const one = 1;\n")
            #expect(current.headers.first(name: .cacheControl) == "public, max-age=31536000, immutable")
            let earlier = try await app.client.get(URI(string: "\(base)/assets/000000000000/js/app.js"))
            #expect(earlier.status == .ok, "a page of the last release still finds its script")
            #expect(earlier.headers.first(name: .cacheControl) == "no-cache")
            let plain = try await app.client.get(URI(string: "\(base)/js/app.js"))
            #expect(plain.headers.first(name: .cacheControl) == "no-cache")
            let missing = try await app.client.get(URI(string: "\(base)\(assets.prefix)/js/none.js"))
            #expect(missing.status == .notFound)
            let outside = try await app.client.get(URI(string: "\(base)\(assets.prefix)/../../etc/passwd"))
            #expect(outside.status == .notFound || outside.status == .badRequest || outside.status == .forbidden)
        }

        #expect(assets.version.count == 12)
        #expect(
            try PublicAssets(directory: directory.path).version == assets.version, "the same files, the same version")
        try Data("export const one = 2;\n".utf8).write(to: directory.appendingPathComponent("js/app.js"))
        #expect(try PublicAssets(directory: directory.path).version != assets.version)
    }
}
