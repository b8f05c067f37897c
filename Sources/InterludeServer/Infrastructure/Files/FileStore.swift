import Fluent
import Foundation
import Vapor

/// A file the server keeps beyond one request, named by what it is and its record's id.
package struct StoredFile: Hashable, Sendable {
    enum Kind: String, Sendable, CaseIterable {
        /// A research export's zip.
        case export
        /// A person's copy of their data.
        case selfExport = "self-export"
        /// An upload of health data, as far as it was received.
        case healthImport = "health-import"
    }

    let kind: Kind
    let id: UUID

    /// `export/<id>`: the name under which every backend keeps it.
    var name: String { "\(kind.rawValue)/\(id.lowercasedText)" }

    package static func export(_ id: UUID) -> StoredFile { StoredFile(kind: .export, id: id) }
    static func selfExport(_ id: UUID) -> StoredFile { StoredFile(kind: .selfExport, id: id) }
    package static func healthImport(_ id: UUID) -> StoredFile { StoredFile(kind: .healthImport, id: id) }
}

/// Where the server keeps the files that another request or another process needs: research exports, people's
/// copies of their data, health uploads as they arrive. On the embedded default they are files in the data
/// directory; with PostgreSQL they are chunks in the database, so that servers on several machines and the worker
/// reach the same files without a shared disk. Files are written and read as streams, never held whole.
package protocol FileStore: Sendable {
    /// Stores the local file under `file`, replacing what was there; the local file is gone afterwards.
    func put(_ file: StoredFile, from local: URL) async throws
    /// Starts `file` empty.
    func create(_ file: StoredFile) async throws
    /// Cuts `file` to its first `size` bytes: what a resumed upload continues after.
    func truncate(_ file: StoredFile, to size: Int64) async throws
    /// Writes bytes to the end of `file` (of `size` bytes now) as they arrive.
    func appender(_ file: StoredFile, at size: Int64) async throws -> any FileAppender
    /// The file's size and its bytes as they are read; nil when there is no such file.
    func read(_ file: StoredFile) async throws -> StoredBytes?
    /// A file on this machine with the stored bytes, for a reader that seeks (an archive); `release` it after.
    func local(_ file: StoredFile) async throws -> LocalCopy
    func remove(_ files: [StoredFile]) async
}

/// Bytes written to the end of a stored file; `finish` makes them stored and answers how many were written.
package protocol FileAppender: AnyObject, Sendable {
    func write(_ bytes: ArraySlice<UInt8>) async throws
    func finish() async throws -> Int64
}

/// A stored file's bytes, read as they are sent on.
package struct StoredBytes: Sendable {
    let size: Int64
    let chunks: AsyncThrowingStream<ArraySlice<UInt8>, any Error>
}

/// A stored file on this machine's disk: the store's own file, or a copy made for the reader and removed after.
package struct LocalCopy: Sendable {
    package let url: URL
    let temporary: Bool

    package func release() {
        if temporary { try? FileManager.default.removeItem(at: url) }
    }
}

extension AppServices {
    /// The file store of this installation: the database's when it is PostgreSQL, the data directory's otherwise.
    package func files(on database: any Database) -> any FileStore {
        switch settings.database {
        case .postgres: DatabaseFileStore(database: database, scratch: scratchDirectory)
        case .sqliteFile: DirectoryFileStore(dataDirectory: settings.dataDirectory)
        }
    }

    /// Where this machine writes files before they are stored: a run's work folder, an upload's local copy.
    package var scratchDirectory: URL { URL(fileURLWithPath: settings.dataDirectory).appendingPathComponent("work") }
}

extension Response.Body {
    /// A stored file sent as it is read, with its length.
    init(stored file: StoredBytes) {
        self.init(
            asyncStream: { writer in
                for try await chunk in file.chunks { try await writer.write(.buffer(ByteBuffer(bytes: chunk))) }
                try await writer.write(.end)
            }, count: Int(file.size))
    }
}

extension StoredBytes {
    /// The same bytes, read as they are asked for; `done` runs once they were all read, or reading failed. (A
    /// reader that stops early leaves the rest to whoever sweeps the file.)
    func whenRead(_ done: @escaping @Sendable () async -> Void) -> StoredBytes {
        let reading = Reading(chunks.makeAsyncIterator())
        let stream = AsyncThrowingStream<ArraySlice<UInt8>, any Error> {
            do {
                if let chunk = try await reading.next() { return chunk }
                await done()
                return nil
            } catch {
                await done()
                throw error
            }
        }
        return StoredBytes(size: size, chunks: stream)
    }

    /// One reader's place in the chunks, asked for one after another.
    private final class Reading: @unchecked Sendable {
        private var iterator: AsyncThrowingStream<ArraySlice<UInt8>, any Error>.AsyncIterator

        init(_ iterator: AsyncThrowingStream<ArraySlice<UInt8>, any Error>.AsyncIterator) {
            self.iterator = iterator
        }

        func next() async throws -> ArraySlice<UInt8>? {
            try await iterator.next()
        }
    }
}
