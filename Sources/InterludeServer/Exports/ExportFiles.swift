import Crypto
import Foundation
import InterludeCore

/// Where a run of an export writes on this machine: its files in `<id>.work/` and the zip beside them as
/// `<id>.zip.partial`, which the file store takes once complete, so a download never finds half a file and a run cut
/// short leaves nothing a new run would trip over.
struct ExportFiles: Sendable {
    let directory: URL

    init(services: AppServices) {
        directory = URL(fileURLWithPath: services.settings.dataDirectory).appendingPathComponent("exports")
    }

    func partialZip(_ id: UUID) -> URL { directory.appendingPathComponent("\(id.lowercasedText).zip.partial") }
    func work(_ id: UUID) -> URL { directory.appendingPathComponent("\(id.lowercasedText).work") }

    /// An empty work folder for a run of export `id`, anything an earlier run left here removed.
    func prepare(_ id: UUID) throws -> URL {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        removeWork(id)
        try FileManager.default.createDirectory(at: work(id), withIntermediateDirectories: true)
        return work(id)
    }

    func removeWork(_ id: UUID) {
        try? FileManager.default.removeItem(at: work(id))
        try? FileManager.default.removeItem(at: partialZip(id))
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
        guard FileManager.default.createFile(atPath: url.path, contents: nil) else {
            throw CocoaError(.fileWriteUnknown)
        }
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
