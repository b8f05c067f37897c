import Foundation
import InterludeCore
import OpenAPIRuntime

// MARK: - Health imports

extension APIHandler {
    func startMyHealthImport(_ input: Operations.StartMyHealthImport.Input) async throws
        -> Operations.StartMyHealthImport.Output
    {
        let context = try APIContext.current()
        let patient = try await context.user(.patient)
        let (format, body) = try await Self.upload(input.body)
        let record = try await context.healthImports.start(
            format, size: input.headers.uploadLength, body: body, by: patient.requireID())
        return .created(.init(body: .json(try .init(record))))
    }

    func continueMyHealthImport(_ input: Operations.ContinueMyHealthImport.Input) async throws
        -> Operations.ContinueMyHealthImport.Output
    {
        let context = try APIContext.current()
        let patient = try await context.user(.patient)
        guard case .binary(let body) = input.body else { throw AppError.malformedRequest }
        let record = try await context.healthImports.append(
            try pathID(input.path.importId), offset: input.headers.uploadOffset, body: body, by: patient.requireID())
        return .ok(.init(body: .json(try .init(record))))
    }

    func getMyHealthImport(_ input: Operations.GetMyHealthImport.Input) async throws
        -> Operations.GetMyHealthImport.Output
    {
        let context = try APIContext.current()
        let patient = try await context.user(.patient)
        let record = try await context.healthImports.find(try pathID(input.path.importId), of: patient.requireID())
        return .ok(.init(body: .json(try .init(record))))
    }

    /// The file's format, from its content type, or from its first bytes when sent as plain bytes.
    private static func upload(_ body: Operations.StartMyHealthImport.Input.Body) async throws -> (
        HealthImportRecord.Format, HTTPBody
    ) {
        switch body {
        case .applicationZip(let body): return (.appleHealthZip, body)
        case .xml(let body), .textXml(let body): return (.appleHealthXML, body)
        case .csv(let body): return (.csv, body)
        case .binary(let body):
            var iterator = body.makeAsyncIterator()
            guard let first = try await iterator.next() else { throw AppError.field("body", .required) }
            return (
                .sniffed(first),
                HTTPBody(Prepended(first: first, rest: iterator), length: body.length, iterationBehavior: .single)
            )
        }
    }
}

/// A body whose first chunk was read to learn its format, with that chunk put back in front. Iterated once, by the
/// task that serves the request.
private struct Prepended: AsyncSequence, @unchecked Sendable {
    typealias Element = ArraySlice<UInt8>
    let first: ArraySlice<UInt8>
    let rest: HTTPBody.AsyncIterator

    func makeAsyncIterator() -> Iterator { Iterator(first: first, rest: rest) }

    struct Iterator: AsyncIteratorProtocol {
        var first: ArraySlice<UInt8>?
        var rest: HTTPBody.AsyncIterator

        mutating func next() async throws -> ArraySlice<UInt8>? {
            if let chunk = first {
                first = nil
                return chunk
            }
            return try await rest.next()
        }
    }
}

extension HealthImportRecord.Format {
    /// A file sent as plain bytes: a zip archive starts with `PK`, XML with `<` (after a byte order mark or blank
    /// space); anything else is read as CSV.
    static func sniffed(_ start: ArraySlice<UInt8>) -> Self {
        if start.starts(with: Array("PK".utf8)) { return .appleHealthZip }
        let content = start.drop { [0xEF, 0xBB, 0xBF, 0x20, 0x0A, 0x0D, 0x09].contains($0) }
        return content.first == UInt8(ascii: "<") ? .appleHealthXML : .csv
    }
}

extension APIContext {
    var healthImports: HealthImportService { HealthImportService(database: database, services: services) }
}

extension Components.Schemas.HealthImport {
    init(_ record: HealthImportRecord) throws {
        let reading = record.status == .reading || record.status == .waiting
        self.init(
            id: try record.requireID().lowercasedText, format: .init(rawValue: record.format.rawValue) ?? .csv,
            status: .init(rawValue: record.status.rawValue) ?? .failed, size: record.size, received: record.received,
            read: record.read,
            progress: reading ? record.size.map { Double(record.read) / Double(max($0, 1)) } : nil,
            stored: record.stored,
            duplicates: record.duplicates,
            skipped: .init(
                notEnabled: record.skippedNotEnabled, outsideWindow: record.skippedOutsideWindow,
                invalid: record.skippedInvalid,
                otherTypes: record.skippedOtherTypes),
            problem: record.problem, createdAt: record.createdAt, finishedAt: record.finishedAt)
    }
}
