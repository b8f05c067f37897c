import Fluent
import Foundation

/// One id an erasure removed, kept only as a keyed hash (HMAC with the server secret) with the table it was in:
/// enough to recognise the id in a backup restored later or in an upload from an app that still holds it, never
/// enough to learn it.
final class ErasedIDRecord: Model, @unchecked Sendable {
    static let schema = "erased_ids"

    // managed
    @ID(key: .id) var id: UUID?

    // references
    @Parent(key: "erasure_id") var erasure: ErasureRecord

    // data
    @Field(key: "table_name") var table: String
    @Field(key: "digest") var digest: String

    /// Listed here so Fluent need not find them by reflection on every row (PropertyListTests keeps it whole).
    var properties: [any AnyProperty] { [$id, $erasure, $table, $digest] }

    init() {}

    init(erasureID: UUID, table: String, digest: String) {
        self.$erasure.id = erasureID
        self.table = table
        self.digest = digest
    }
}
