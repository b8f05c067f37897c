import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Stored files as files in the data directory: `exports/<id>.zip`, `self-exports/<id>.zip`, `health-imports/<id>`.
/// For one machine, the embedded default.
struct DirectoryFileStore: FileStore {
    let dataDirectory: String

    func url(_ file: StoredFile) -> URL {
        let root = URL(fileURLWithPath: dataDirectory)
        switch file.kind {
        case .export: return root.appendingPathComponent("exports/\(file.id.lowercasedText).zip")
        case .selfExport: return root.appendingPathComponent("self-exports/\(file.id.lowercasedText).zip")
        case .healthImport: return root.appendingPathComponent("health-imports/\(file.id.lowercasedText)")
        }
    }

    struct Unwritable: Error, CustomStringConvertible {
        let path: String
        var description: String { "cannot write \(path)" }
    }

    private func prepare(_ file: StoredFile) throws -> URL {
        let url = url(file)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        return url
    }

    /// Renamed into place in one step, so a reader finds the whole file or none.
    func put(_ file: StoredFile, from local: URL) async throws {
        let url = try prepare(file)
        if rename(local.path, url.path) != 0 {
            try? FileManager.default.removeItem(at: url)
            try FileManager.default.moveItem(at: local, to: url)
        }
    }

    func create(_ file: StoredFile) async throws {
        let url = try prepare(file)
        guard FileManager.default.createFile(atPath: url.path, contents: nil) else { throw Unwritable(path: url.path) }
    }

    func truncate(_ file: StoredFile, to size: Int64) async throws {
        let handle = try FileHandle(forWritingTo: url(file))
        defer { try? handle.close() }
        try handle.truncate(atOffset: UInt64(size))
    }

    func appender(_ file: StoredFile, at size: Int64) async throws -> any FileAppender {
        let handle = try FileHandle(forWritingTo: url(file))
        try handle.seek(toOffset: UInt64(size))
        return Appender(handle: handle)
    }

    func read(_ file: StoredFile) async throws -> StoredBytes? {
        let url = url(file)
        guard let size = (try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? NSNumber)?.int64Value,
            let handle = try? FileHandle(forReadingFrom: url)
        else { return nil }
        let chunks = AsyncThrowingStream<ArraySlice<UInt8>, any Error> {
            guard let data = try handle.read(upToCount: Self.chunkSize), !data.isEmpty else {
                try? handle.close()
                return nil
            }
            return ArraySlice(data)
        }
        return StoredBytes(size: size, chunks: chunks)
    }

    func local(_ file: StoredFile) async throws -> LocalCopy {
        LocalCopy(url: url(file), temporary: false)
    }

    func remove(_ files: [StoredFile]) async {
        for file in files { try? FileManager.default.removeItem(at: url(file)) }
    }

    static let chunkSize = 256 * 1024

    private final class Appender: FileAppender, @unchecked Sendable {
        let handle: FileHandle
        private var written: Int64 = 0

        init(handle: FileHandle) {
            self.handle = handle
        }

        func write(_ bytes: ArraySlice<UInt8>) async throws {
            try handle.write(contentsOf: bytes)
            written += Int64(bytes.count)
        }

        func finish() async throws -> Int64 {
            try handle.close()
            return written
        }
    }
}
