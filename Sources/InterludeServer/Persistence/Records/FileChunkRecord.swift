import Fluent
import Foundation

/// A piece of a stored file (an export, a person's copy of their data, an upload being received) kept in the
/// database when it is PostgreSQL, so that every server process and the worker reach the same files. A file is its
/// chunks in the order of their offsets.
final class FileChunkRecord: Model, @unchecked Sendable {
    static let schema = "file_chunks"

    // managed
    @ID(key: .id) var id: UUID?

    // data
    /// The file the chunk belongs to: `export/<id>`, `self-export/<id>`, `health-import/<id>`.
    @Field(key: "file") var file: String
    /// Where in the file the chunk starts.
    @Field(key: "offset") var offset: Int64
    @Field(key: "data") var data: Data

    /// Listed here so Fluent need not find them by reflection on every row (PropertyListTests keeps it whole).
    var properties: [any AnyProperty] { [$id, $file, $offset, $data] }

    init() {}
}
