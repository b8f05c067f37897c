import Crypto
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import InterludeCore

/// Where exports live on disk: `exports/` in the data directory, one `<id>.zip` per finished export. A run writes
/// its files into `<id>.work/` and the zip as `<id>.zip.partial`, renamed only when complete, so a download never
/// finds half a file and a run cut short leaves nothing a new run would trip over.
struct ExportFiles: Sendable {
    let directory: URL

    init(services: AppServices) {
        directory = URL(fileURLWithPath: services.settings.dataDirectory).appendingPathComponent("exports")
    }

    func zip(_ id: UUID) -> URL { directory.appendingPathComponent("\(id.lowercasedText).zip") }
    func partialZip(_ id: UUID) -> URL { directory.appendingPathComponent("\(id.lowercasedText).zip.partial") }
    func work(_ id: UUID) -> URL { directory.appendingPathComponent("\(id.lowercasedText).work") }

    /// An empty work folder for a run of export `id`, anything an earlier run left removed.
    func prepare(_ id: UUID) throws -> URL {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        removeWork(id)
        try? FileManager.default.removeItem(at: zip(id))
        try FileManager.default.createDirectory(at: work(id), withIntermediateDirectories: true)
        return work(id)
    }

    /// Puts the finished zip in place in one step (rename), so a reader finds the whole file or none.
    func publish(_ id: UUID) throws {
        guard rename(partialZip(id).path, zip(id).path) == 0 else { throw CocoaError(.fileWriteUnknown) }
    }

    func removeWork(_ id: UUID) {
        try? FileManager.default.removeItem(at: work(id))
        try? FileManager.default.removeItem(at: partialZip(id))
    }

    func remove(_ ids: [UUID]) {
        for id in ids {
            removeWork(id)
            try? FileManager.default.removeItem(at: zip(id))
        }
    }
}

/// One file of an export package, written as it fills and hashed on the way.
final class PackageFile {
    let path: String
    private(set) var rows = 0
    private let handle: FileHandle
    private var buffer: [UInt8] = []
    private var hasher = SHA256()

    init(in directory: URL, path: String) throws {
        self.path = path
        let url = directory.appendingPathComponent(path)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        guard FileManager.default.createFile(atPath: url.path, contents: nil) else { throw CocoaError(.fileWriteUnknown) }
        handle = try FileHandle(forWritingTo: url)
        buffer.reserveCapacity(Self.chunk)
    }

    private static let chunk = 256 * 1024

    func write(_ text: String) throws {
        buffer.append(contentsOf: text.utf8)
        if buffer.count >= Self.chunk { try flush() }
    }

    /// One CSV row (or NDJSON line); the header is counted as a row too.
    func row(_ fields: [String?]) throws {
        try write(CSV.row(fields))
        rows += 1
    }

    func line(_ data: Data) throws {
        buffer.append(contentsOf: data)
        buffer.append(0x0A)
        rows += 1
        if buffer.count >= Self.chunk { try flush() }
    }

    private func flush() throws {
        hasher.update(data: buffer)
        try handle.write(contentsOf: buffer)
        buffer.removeAll(keepingCapacity: true)
    }

    /// Closes the file and returns its SHA-256, hex.
    func close() throws -> String {
        try flush()
        try handle.close()
        return hasher.finalize().lowercaseHex
    }
}
