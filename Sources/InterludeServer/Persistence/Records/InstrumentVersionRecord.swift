import Fluent
import Foundation

/// One version of an instrument: a draft until published, then never changed again.
final class InstrumentVersionRecord: Model, @unchecked Sendable {
    static let schema = "instrument_versions"

    enum Status: String {
        case draft
        case published
    }

    enum Origin: String {
        case library
        case json
        case fhir
        case redcap
    }

    // managed
    @ID(key: .id) var id: UUID?
    @Field(key: "created_at") var createdAt: Date

    // references
    @OptionalParent(key: "created_by") var createdBy: UserRecord?

    // data
    @Field(key: "key") var key: String
    @Field(key: "version") var version: Int
    @Field(key: "title") var title: String
    @Field(key: "status") var status: String
    @Field(key: "origin") var origin: String
    @Field(key: "definition") var definition: String
    @OptionalField(key: "published_at") var publishedAt: Date?

    init() {}

    init(key: String, version: Int, title: String, origin: Origin, definition: String, createdBy: UUID?, now: Date) {
        self.key = key
        self.version = version
        self.title = title
        self.status = Status.draft.rawValue
        self.origin = origin.rawValue
        self.definition = definition
        self.$createdBy.id = createdBy
        self.createdAt = now
    }
}
