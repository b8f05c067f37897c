import Fluent
import Foundation
import SQLKit

/// Stored files as chunks of about a megabyte in `file_chunks`, for PostgreSQL: every server process and the worker
/// reach them, `pg_dump` carries them, and a file is written and read a chunk at a time, never whole.
struct DatabaseFileStore: FileStore {
    let database: any Database
    /// Where this machine keeps a copy for a reader that seeks.
    let scratch: URL

    static let chunkSize = 1 << 20

    private var sql: any SQLDatabase { Statements.sql(database) }
    private static let table = SQLIdentifier(FileChunkRecord.schema)

    /// Written under a name of its own first and renamed in one transaction, so a reader finds the whole file or
    /// none, and two writers of the same file never mix their chunks.
    func put(_ file: StoredFile, from local: URL) async throws {
        let handle = try FileHandle(forReadingFrom: local)
        defer {
            try? handle.close()
            try? FileManager.default.removeItem(at: local)
        }
        let part = "\(file.name)#\(UUID().lowercasedText)"
        do {
            var offset: Int64 = 0
            while let data = try handle.read(upToCount: Self.chunkSize), !data.isEmpty {
                try await insert(part, at: offset, data)
                offset += Int64(data.count)
            }
            try await database.transaction { transaction in
                let sql = Statements.sql(transaction)
                try await sql.delete(from: Self.table).where("file", .equal, SQLBind(file.name)).run()
                try await sql.update(Self.table).set("file", to: SQLBind(file.name)).where(
                    "file", .equal, SQLBind(part)
                ).run()
            }
        } catch {
            try? await sql.delete(from: Self.table).where("file", .equal, SQLBind(part)).run()
            throw error
        }
    }

    func create(_ file: StoredFile) async throws {
        try await sql.delete(from: Self.table).where("file", .equal, SQLBind(file.name)).run()
    }

    func truncate(_ file: StoredFile, to size: Int64) async throws {
        try await sql.delete(from: Self.table).where("file", .equal, SQLBind(file.name))
            .where("offset", .greaterThanOrEqual, SQLBind(size)).run()
        // The last chunk left may reach past the size: it keeps its first bytes.
        guard
            let last = try await sql.select().column("offset")
                .column(SQLAlias(SQLFunction("length", args: SQLIdentifier("data")), as: SQLIdentifier("length")))
                .from(Self.table).where("file", .equal, SQLBind(file.name)).orderBy("offset", .descending).limit(1)
                .first()
        else { return }
        let start = try last.decode(column: "offset", as: Int64.self)
        guard start + Int64(try last.decode(column: "length", as: Int.self)) > size else { return }
        try await sql.update(Self.table)
            .set(
                "data",
                to: SQLFunction(
                    "substr", args: SQLIdentifier("data"), SQLLiteral.numeric("1"),
                    SQLLiteral.numeric(String(size - start)))
            )
            .where("file", .equal, SQLBind(file.name)).where("offset", .equal, SQLBind(start)).run()
    }

    func appender(_ file: StoredFile, at size: Int64) async throws -> any FileAppender {
        Appender(store: self, file: file, offset: size)
    }

    func read(_ file: StoredFile) async throws -> StoredBytes? {
        let row = try await sql.select()
            .column(SQLAlias(SQLFunction("count", args: SQLLiteral.all), as: SQLIdentifier("chunks")))
            .column(
                SQLAlias(
                    SQLFunction(
                        "coalesce", args: SQLFunction("sum", args: SQLFunction("length", args: SQLIdentifier("data"))),
                        SQLLiteral.numeric("0")), as: SQLIdentifier("size"))
            )
            .from(Self.table).where("file", .equal, SQLBind(file.name)).first()
        guard let row, try row.decode(column: "chunks", as: Int64.self) > 0 else { return nil }
        let size = try row.decode(column: "size", as: Int64.self)
        let store = self
        let next = NextChunk()
        let chunks = AsyncThrowingStream<ArraySlice<UInt8>, any Error> {
            guard let (offset, data) = try await store.chunk(of: file, from: next.offset) else { return nil }
            next.offset = offset + Int64(data.count)
            return ArraySlice(data)
        }
        return StoredBytes(size: size, chunks: chunks)
    }

    func local(_ file: StoredFile) async throws -> LocalCopy {
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        let url = scratch.appendingPathComponent(
            "\(file.kind.rawValue)-\(file.id.lowercasedText)-\(UUID().lowercasedText)")
        guard FileManager.default.createFile(atPath: url.path, contents: nil) else {
            throw CocoaError(.fileWriteUnknown)
        }
        let copy = LocalCopy(url: url, temporary: true)
        do {
            let handle = try FileHandle(forWritingTo: url)
            defer { try? handle.close() }
            var offset: Int64 = 0
            while let (start, data) = try await chunk(of: file, from: offset) {
                try handle.write(contentsOf: data)
                offset = start + Int64(data.count)
            }
        } catch {
            copy.release()
            throw error
        }
        return copy
    }

    func remove(_ files: [StoredFile]) async {
        guard !files.isEmpty else { return }
        // With whatever a writer stopped in the middle of putting left under a name of its own.
        try? await sql.delete(from: Self.table).where { any in
            any.where("file", .in, SQLBind.group(files.map(\.name)))
            for file in files { any.orWhere("file", .like, SQLBind("\(file.name)#%")) }
            return any
        }.run()
    }

    /// The chunk that starts at or after `offset`, with where it starts.
    private func chunk(of file: StoredFile, from offset: Int64) async throws -> (Int64, Data)? {
        guard
            let row = try await sql.select().column("offset").column("data").from(Self.table)
                .where("file", .equal, SQLBind(file.name)).where("offset", .greaterThanOrEqual, SQLBind(offset))
                .orderBy("offset").limit(1).first()
        else { return nil }
        return (try row.decode(column: "offset", as: Int64.self), try row.decode(column: "data", as: Data.self))
    }

    fileprivate func insert(_ name: String, at offset: Int64, _ data: Data) async throws {
        try await sql.insert(into: Self.table).columns("id", "file", "offset", "data")
            .values(SQLBind(UUID()), SQLBind(name), SQLBind(offset), SQLBind(data)).run()
    }

    /// Where the next read of a stream starts.
    private final class NextChunk: @unchecked Sendable {
        var offset: Int64 = 0
    }

    /// Gathers what arrives into chunks of about a megabyte; what is left is stored by `finish`.
    private final class Appender: FileAppender, @unchecked Sendable {
        let store: DatabaseFileStore
        let file: StoredFile
        private var offset: Int64
        private var buffer = Data()
        private var written: Int64 = 0

        init(store: DatabaseFileStore, file: StoredFile, offset: Int64) {
            self.store = store
            self.file = file
            self.offset = offset
        }

        func write(_ bytes: ArraySlice<UInt8>) async throws {
            buffer.append(contentsOf: bytes)
            if buffer.count >= DatabaseFileStore.chunkSize { try await flush() }
        }

        func finish() async throws -> Int64 {
            try await flush()
            return written
        }

        private func flush() async throws {
            guard !buffer.isEmpty else { return }
            try await store.insert(file.name, at: offset, buffer)
            offset += Int64(buffer.count)
            written += Int64(buffer.count)
            buffer = Data()
        }
    }
}
