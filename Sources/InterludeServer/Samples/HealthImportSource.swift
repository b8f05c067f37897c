import Foundation
import InterludeCore
import ZIPFoundation

/// Hands batches of samples from the thread that reads a file to the task that stores them, one at a time: the
/// reader waits until each batch is stored, so memory holds one batch whatever the file's size.
final class BatchHandOff: @unchecked Sendable {
    enum Item: Sendable {
        /// Samples read, the bytes of the file read so far, and records of other types passed over meanwhile.
        case batch([Sample.Raw], read: Int, otherRecords: Int)
        /// The file is read; why not completely, if it was not.
        case finished(String?)
    }

    let items: AsyncStream<Item>
    private let continuation: AsyncStream<Item>.Continuation
    private let stored = DispatchSemaphore(value: 0)
    private let lock = NSLock()
    private var cancelled = false

    struct Cancelled: Error {}

    init() {
        (items, continuation) = AsyncStream.makeStream(of: Item.self)
    }

    /// From the reading thread: waits until the batch is stored; throws when storing stopped.
    func send(_ samples: [Sample.Raw], read: Int, otherRecords: Int) throws {
        try checkCancelled()
        continuation.yield(.batch(samples, read: read, otherRecords: otherRecords))
        stored.wait()
        try checkCancelled()
    }

    func finish(_ problem: String?) {
        continuation.yield(.finished(problem))
        continuation.finish()
    }

    /// From the storing task: the batch is stored, the reader may go on.
    func acknowledge() { stored.signal() }

    /// From the storing task: stop reading.
    func cancel() {
        lock.withLock { cancelled = true }
        stored.signal()
    }

    private func checkCancelled() throws {
        if lock.withLock({ cancelled }) { throw Cancelled() }
    }
}

/// A file to import, read on a thread of its own: a zipped Apple Health export (its `export.xml` inflated as a
/// stream), the XML itself, or a CSV file with a header row.
struct HealthImportSource: Sendable {
    let format: HealthImportRecord.Format
    let file: URL
    let size: Int

    static let batchSize = Sample.batchLimit
    static let chunkSize = 1 << 20

    func start(into handOff: BatchHandOff) {
        let source = self
        let thread = Thread {
            do {
                try source.read(into: handOff)
                handOff.finish(nil)
            } catch is BatchHandOff.Cancelled {
                handOff.finish(nil)
            } catch {
                handOff.finish(String(describing: error))
            }
        }
        thread.start()
    }

    /// What a zipped export may unpack to: a few years of Apple Health are a few gigabytes, and XML packs about ten
    /// to twenty times; a file far beyond either is built to exhaust the server.
    static let inflatedLimit: Int64 = 8 << 30
    static let ratioLimit: Int64 = 100

    enum Problem: Error, CustomStringConvertible {
        case noExport
        case unpacksTooLarge

        var description: String {
            switch self {
            case .noExport: "the archive holds no export.xml"
            case .unpacksTooLarge: "the archive unpacks to far more than an export could be"
            }
        }
    }

    /// How far a zip of `size` bytes may unpack.
    static func inflationLimit(of size: Int) -> Int64 {
        min(inflatedLimit, max(Int64(size), 1) * ratioLimit)
    }

    private func read(into handOff: BatchHandOff) throws {
        var batcher = Batcher(handOff: handOff)
        switch format {
        case .appleHealthZip:
            let archive = try Archive(url: file, accessMode: .read)
            guard let entry = archive.first(where: { ($0.path as NSString).lastPathComponent == "export.xml" }) else {
                throw Problem.noExport
            }
            let limit = Self.inflationLimit(of: size)
            // What the archive says it holds, first; then what it really unpacks to, which it may hide.
            guard Int64(entry.uncompressedSize) <= limit else { throw Problem.unpacksTooLarge }
            var reader = AppleHealthReader()
            var inflated = 0
            let whole = max(Double(entry.uncompressedSize), 1)
            _ = try archive.extract(entry, bufferSize: Self.chunkSize) { data in
                inflated += data.count
                guard Int64(inflated) <= limit else { throw Problem.unpacksTooLarge }
                try batcher.add(
                    try reader.feed(data), read: Int(Double(size) * Double(inflated) / whole),
                    otherRecords: reader.otherRecords)
            }
            try batcher.flush(read: size, otherRecords: reader.otherRecords)
        case .appleHealthXML:
            var reader = AppleHealthReader()
            try chunks { data, read in
                try batcher.add(try reader.feed(data), read: read, otherRecords: reader.otherRecords)
            }
            try batcher.flush(read: size, otherRecords: reader.otherRecords)
        case .csv:
            var reader = SampleCSVReader()
            try chunks { data, read in try batcher.add(try reader.feed(data), read: read, otherRecords: 0) }
            try batcher.add(try reader.finish(), read: size, otherRecords: 0)
            try batcher.flush(read: size, otherRecords: 0)
        }
    }

    /// The file in chunks, with the bytes read so far.
    private func chunks(_ body: (Data, Int) throws -> Void) throws {
        let handle = try FileHandle(forReadingFrom: file)
        defer { try? handle.close() }
        var read = 0
        while let data = try handle.read(upToCount: Self.chunkSize), !data.isEmpty {
            read += data.count
            try body(data, read)
        }
    }

    /// Gathers samples into full batches.
    private struct Batcher {
        let handOff: BatchHandOff
        var samples: [Sample.Raw] = []
        /// Records of other types already reported.
        var reportedOther = 0

        mutating func add(_ more: [Sample.Raw], read: Int, otherRecords: Int) throws {
            samples += more
            while samples.count >= HealthImportSource.batchSize {
                let batch = Array(samples.prefix(HealthImportSource.batchSize))
                samples.removeFirst(batch.count)
                try handOff.send(batch, read: read, otherRecords: otherRecords - reportedOther)
                reportedOther = otherRecords
            }
        }

        mutating func flush(read: Int, otherRecords: Int) throws {
            try handOff.send(samples, read: read, otherRecords: otherRecords - reportedOther)
            samples = []
            reportedOther = otherRecords
        }
    }
}
