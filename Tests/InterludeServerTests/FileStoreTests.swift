import Foundation
import SQLKit
import Testing

@testable import InterludeServer

/// Both file stores behave alike: the data directory's and the database's (here on the test's own database, SQLite
/// or PostgreSQL, so the chunked store is exercised on both engines).
@Suite("File stores")
struct FileStoreTests {
    enum Backend: String, CaseIterable, Sendable {
        case directory, database
    }

    private func withStore(_ backend: Backend, _ test: (any FileStore, TestContext) async throws -> Void) async throws {
        try await withTestApp { context in
            let store: any FileStore =
                switch backend {
                case .directory: DirectoryFileStore(dataDirectory: context.settings.dataDirectory)
                case .database:
                    DatabaseFileStore(database: context.database, scratch: context.app.interlude.scratchDirectory)
                }
            try await test(store, context)
        }
    }

    private static func bytes(_ count: Int, seed: UInt8) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(seed)) }
    }

    private static func contents(of file: StoredFile, in store: any FileStore) async throws -> (Int64, [UInt8])? {
        guard let stored = try await store.read(file) else { return nil }
        var bytes: [UInt8] = []
        for try await chunk in stored.chunks { bytes.append(contentsOf: chunk) }
        return (stored.size, bytes)
    }

    @Test(
        "a file put in is read back whole, in pieces, and as a local copy; removed, it is gone",
        arguments: Backend.allCases)
    func putReadRemove(_ backend: Backend) async throws {
        try await withStore(backend) { store, context in
            let file = StoredFile.export(UUID())
            let expected = Self.bytes(2 * DatabaseFileStore.chunkSize + 12_345, seed: 7)
            let scratch = context.app.interlude.scratchDirectory
            try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
            let local = scratch.appendingPathComponent("put-\(UUID().uuidString)")
            try Data(expected).write(to: local)

            #expect(try await Self.contents(of: file, in: store) == nil)
            try await store.put(file, from: local)
            #expect(!FileManager.default.fileExists(atPath: local.path))

            let read = try #require(try await Self.contents(of: file, in: store))
            #expect(read.0 == Int64(expected.count))
            #expect(read.1 == expected)
            let copy = try await store.local(file)
            #expect(try Data(contentsOf: copy.url) == Data(expected))
            copy.release()

            await store.remove([file])
            #expect(try await Self.contents(of: file, in: store) == nil)
            let chunks = try await context.sql.select().column(SQLFunction("count", args: SQLLiteral.all), as: "n")
                .from(FileChunkRecord.schema).first()?.decode(column: "n", as: Int.self)
            #expect(chunks == 0)
        }
    }

    @Test(
        "an upload appended in parts, cut back to an offset and continued, holds exactly what was kept",
        arguments: Backend.allCases)
    func appendTruncateContinue(_ backend: Backend) async throws {
        try await withStore(backend) { store, _ in
            let file = StoredFile.healthImport(UUID())
            let first = Self.bytes(DatabaseFileStore.chunkSize + 700, seed: 1)
            let second = Self.bytes(300_000, seed: 2)
            try await store.create(file)
            let appender = try await store.appender(file, at: 0)
            for piece in stride(from: 0, to: first.count, by: 65_536) {
                try await appender.write(first[piece..<min(piece + 65_536, first.count)])
            }
            #expect(try await appender.finish() == Int64(first.count))

            // Cut inside the second piece, as a resumed upload does when the last PATCH was not acknowledged.
            let kept = first.count - 500
            try await store.truncate(file, to: Int64(kept))
            #expect(try await Self.contents(of: file, in: store)?.1 == Array(first[..<kept]))

            let more = try await store.appender(file, at: Int64(kept))
            try await more.write(second[...])
            #expect(try await more.finish() == Int64(second.count))
            let read = try #require(try await Self.contents(of: file, in: store))
            #expect(read.0 == Int64(kept + second.count))
            #expect(read.1 == Array(first[..<kept]) + second)
        }
    }
}
